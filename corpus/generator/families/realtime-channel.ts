import type { Row } from "../../model/row.ts";
import { nodeRoute, nodeUserRoute } from "../code.ts";
import type { BuildContext, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, obj, STR } from "../schemas.ts";
import { type FlaskChannelSpec, flaskChannelCode, flaskRecordViews } from "./realtime-flask.ts";

// What every realtime variant shares: a collection of records whose writes are announced on the variant's
// own channel (a plain WebSocket path, or a socket.io namespace on the server's one Engine.IO path), and
// the channel's code. The families set who is admitted (the handshake check), who receives an event (the
// delivery rule) and how events are numbered, replayed and buffered; everything else is identical between
// a variant and its safe twin.
//
// Both stacks carry socket.io namespaces; plain WebSocket channels need the Fastify servers (the Flask
// servers keep Werkzeug's threaded server, which cannot carry one: see realtime-flask.ts).

export type Protocol = "websocket" | "socket.io";
/**
 * Where the channel reads the credential: the query string, a header on the upgrade, a first message, or
 * the session cookie the browser sends with the handshake (the cookie server's only credential).
 */
export type Placement = "query" | "header" | "message" | "cookie";

export interface ChannelKnobs {
  protocol: Protocol;
  placement?: Placement;
}

/** Who a channel admits once it has looked at the credential. */
export type Admission =
  | "verified" // a valid credential or the upgrade is refused (401)
  | "none" // no check at all
  | "unverified-claims" // a JWT's claims read without checking signature or expiry
  | "any-credential"; // something was presented (the flaw: never looked up)

/** Who receives an event about a record. */
export type Delivery = "everyone" | "same-org";

export interface ChannelSpec {
  admission: Admission;
  delivery: Delivery;
  /** Top-level code run by the publisher, with `message` in scope; may set fields (`message.seq = ...`). */
  stamp?: string;
  /** Replaces the direct delivery (`deliver(message)`): batching, buffering. Declared at top level. */
  deliver?: string;
  /**
   * Extra code on a new subscriber: `subscriber`, `reply(message)` (to that connection only) and `since`
   * (the `since` query or handshake value, or null) in scope: a greeting, a replay.
   */
  onSubscribe?: string;
  /** Frames' extra payload per event (e.g. a large snapshot); an expression with `record` in scope. */
  extra?: string;
}

export interface ChannelPlace {
  /** The plain WebSocket path, or the socket.io namespace. */
  channel: string;
  /** Ledger location (`channel:`): the WebSocket path, or the namespace (a finding names it as a related place). */
  location: string;
  protocol: Protocol;
  placement: Placement;
  collection: string;
  item: string;
  /** Identifier fragment for generated names. */
  id: string;
  event: string;
}

export const SOCKET_IO_PATH = "/socket.io";

/** The imports and the one socket.io server a Fastify app with channels needs (emitted once). */
export const NODE_REALTIME_PRELUDE = `import { Server as SocketIoServer } from "socket.io";
import { WebSocketServer } from "ws";
import * as realtime from "./lib/realtime.mjs";

// One socket.io server on the app's HTTP server; each channel is a namespace of it.
const io = new SocketIoServer(app.server, { path: ${JSON.stringify(SOCKET_IO_PATH)}, serveClient: false });`;

export function channelPlace(row: Row<ChannelKnobs>, ctx: BuildContext): ChannelPlace {
  const protocol = row.knobs.protocol;
  if (ctx.server.stack !== "node" && protocol !== "socket.io") {
    throw new Error(
      `${row.id}: plain WebSocket channels live on the Fastify servers (see realtime-flask.ts)`,
    );
  }
  const cookieServer = ctx.server.auth === "cookie";
  if (cookieServer !== (row.knobs.placement === "cookie")) {
    throw new Error(`${row.id}: the session cookie is the cookie server's channel credential, and only its`);
  }
  const channel =
    protocol === "websocket" ? `/ws/${ctx.place.group}/${ctx.place.plural}` : `/${ctx.place.kind}`;
  return {
    channel,
    location: channel,
    protocol,
    placement: row.knobs.placement ?? (protocol === "websocket" ? "query" : "message"),
    collection: ctx.place.base,
    item: `${ctx.place.base}/{id}`,
    id: ctx.place.slug,
    event: `${ctx.place.singular}:changed`,
  };
}

/** The credential the server signs its users in with, by name where it travels. */
function credentialName(ctx: BuildContext): { query: string; header: string; field: string } {
  return ctx.server.auth === "apikey"
    ? { query: "api_key", header: "x-api-key", field: "api_key" }
    : { query: "token", header: "authorization", field: "token" };
}

/** JavaScript that resolves `credential` (a string) to `user` (or undefined) as the admission says. */
function identify(admission: Admission, ctx: BuildContext): string {
  const { ph } = ctx;
  if (admission === "none") return "const user = undefined;";
  if (ctx.server.auth === "apikey") {
    return `const user = credential ? await db.get("SELECT * FROM users WHERE api_key = ${ph(1)}", [credential]) : undefined;`;
  }
  if (admission === "unverified-claims") {
    return `const claims = realtime.unverifiedClaims(credential);
const user = claims ? await db.get("SELECT * FROM users WHERE id = ${ph(1)}", [claims.sub]) : undefined;`;
  }
  return `const claims = verifyJwt(credential);
const user = claims ? await db.get("SELECT * FROM users WHERE id = ${ph(1)}", [claims.sub]) : undefined;`;
}

/** Whether the admission refuses a connection once `user` and `credential` are known. */
function refuses(admission: Admission): string {
  if (admission === "none") return "false";
  if (admission === "any-credential") return "!credential";
  return "!user";
}

function deliveryRule(delivery: Delivery): string {
  return delivery === "everyone"
    ? "() => true"
    : "(subscriber) => subscriber.user !== undefined && subscriber.user.org_id === record.org_id";
}

/** The channel's top-level code: its hub, its handshake, and `publish_<id>(kind, record)`. */
export function channelCode(place: ChannelPlace, spec: ChannelSpec, ctx: BuildContext): string {
  const names = credentialName(ctx);
  const hub = `hub_${place.id}`;
  const bearerHeader = ctx.server.auth === "bearer";
  const fromHeader = bearerHeader
    ? "bearerToken(request)"
    : `String(request.headers[${JSON.stringify(names.header)}] ?? "")`;
  const deliver =
    spec.deliver ?? `function deliver_${place.id}(message, admit) {\n  ${hub}.publish(message, admit);\n}`;
  const publish = `function publish_${place.id}(type, record) {
  const message = { type, record${spec.extra ? `, ...(${spec.extra})` : ""} };
${spec.stamp ? indent(spec.stamp) : ""}
  deliver_${place.id}(message, ${deliveryRule(spec.delivery)});
}`;
  const onSubscribe = spec.onSubscribe ? indent(spec.onSubscribe, 4) : "";
  if (place.protocol === "websocket") {
    const early = place.placement !== "message";
    const read =
      place.placement === "query"
        ? `realtime.queryOf(request).get(${JSON.stringify(names.query)}) ?? ""`
        : place.placement === "header"
          ? fromHeader
          : "";
    const check = `${identify(spec.admission, ctx)}
if (${refuses(spec.admission)}) {
  ${early ? `realtime.refuseUpgrade(socket, 401, "authentication required");` : `ws.close(4401, "authentication required");`}
  return;
}`;
    const subscribe = `const subscriber = realtime.wsSubscriber(ws, user);
const leave = ${hub}.add(subscriber);
ws.on("close", leave);${
      onSubscribe.trim()
        ? `\nconst since = realtime.queryOf(request).get("since");\nconst reply = (message) => ws.send(JSON.stringify(message));\n${onSubscribe.replace(/^ {4}/gm, "")}`
        : ""
    }`;
    const handler = early
      ? `const credential = ${read};
${check}
wss_${place.id}.handleUpgrade(request, socket, head, (ws) => {
${indent(subscribe)}
});`
      : `wss_${place.id}.handleUpgrade(request, socket, head, async (ws) => {
  const hello = (await realtime.firstMessage(ws)) ?? {};
  const credential = typeof hello[${JSON.stringify(names.field)}] === "string" ? hello[${JSON.stringify(names.field)}] : "";
${indent(check)}
${indent(subscribe)}
});`;
    return `const ${hub} = realtime.createHub();
const wss_${place.id} = new WebSocketServer({ noServer: true });
app.server.on("upgrade", async (request, socket, head) => {
  if (realtime.pathnameOf(request) !== ${JSON.stringify(place.channel)}) return;
${indent(handler)}
});
${deliver}
${publish}`;
  }
  // socket.io: a namespace whose middleware reads the credential from the handshake.
  const read =
    place.placement === "header"
      ? fromHeader.replace("request", "socket.request")
      : place.placement === "query"
        ? `String(socket.handshake.query[${JSON.stringify(names.query)}] ?? "")`
        : `String(socket.handshake.auth?.[${JSON.stringify(names.field)}] ?? "")`;
  return `const ${hub} = realtime.createHub();
const nsp_${place.id} = io.of(${JSON.stringify(place.channel)});
nsp_${place.id}.use(async (socket, next) => {
  const credential = ${read};
${indent(identify(spec.admission, ctx))}
  if (${refuses(spec.admission)}) return next(new Error("authentication required"));
  socket.data.user = user;
  next();
});
nsp_${place.id}.on("connection", (socket) => {
  const user = socket.data.user;
  const reply = (message) => socket.emit(${JSON.stringify(place.event)}, message);
  const subscriber = { user, send: reply };
  const leave = ${hub}.add(subscriber);
  socket.on("disconnect", leave);${
    onSubscribe.trim()
      ? `\n  const since = socket.handshake.query.since ?? socket.handshake.auth?.since ?? null;\n${onSubscribe}`
      : ""
  }
});
${deliver}
${publish}`;
}

/** The record as events and the API show it. */
const COLUMNS = "id, title, body AS note, owner_id, org_id";
const RECORD_SCHEMA = obj({ id: INT, title: STR, note: STR, owner_id: INT, org_id: INT });

/**
 * The collection's operations: create (the variant's own endpoint, announcing `created`), read and update
 * (announcing `updated`), scoped to the caller's org, or readable by anyone for a public channel.
 */
export function recordOperations(
  place: ChannelPlace,
  ctx: BuildContext,
  options: {
    publicRead?: boolean;
    describe: string;
    /** What the create announces instead of the bare row: expressions over `record` and `user`. */
    eventRecord?: { node: string; python: string };
  },
): { create: Endpoint; support: Endpoint[] } {
  const { ph } = ctx;
  const kind = JSON.stringify(ctx.place.kind);
  const views = flaskRecordViews(place, ctx, options.publicRead === true, options.eventRecord?.python);
  const body = obj({ title: { type: "string", maxLength: 80 }, note: { type: "string", maxLength: 400 } }, [
    "title",
  ]);
  const validate = `const input = request.body ?? {};
const title = input.title;
const text = input.note === undefined ? "" : input.note;
if (typeof title !== "string" || title.length === 0 || title.length > 80 || typeof text !== "string" || text.length > 400)
  return reply.code(400).send({ error: "title must be 1 to 80 characters, note at most 400" });`;
  const channelWords =
    place.protocol === "websocket"
      ? `the WebSocket ${place.channel}`
      : `the socket.io namespace ${place.channel} (path ${SOCKET_IO_PATH}, event ${place.event})`;
  const create: Endpoint = {
    method: "POST",
    path: place.collection,
    summary: `File a ${ctx.place.singular}`,
    description: `${options.describe} Each change is announced on ${channelWords}.`,
    access: "user",
    alwaysDocumented: true,
    body: { contentType: "application/json", schema: body, required: true },
    responses: {
      "201": json("filed", RECORD_SCHEMA),
      "400": err("title missing or too long"),
      ...guarded("user"),
    },
    python: views.create,
    node: nodeUserRoute(
      "POST",
      place.collection,
      `${validate}
const record = await db.get("INSERT INTO records (uid, kind, owner_id, org_id, title, body, created_at) VALUES (${[1, 2, 3, 4, 5, 6, 7].map(ph).join(", ")}) RETURNING ${COLUMNS}", [crypto.randomUUID(), ${kind}, user.id, user.org_id, title, text, new Date().toISOString()]);
publish_${place.id}("created", ${options.eventRecord?.node ?? "record"});
return reply.code(201).send(record);`,
    ),
  };
  const find = `const id = String(request.params["id"]);
if (!/^[0-9]{1,9}$/.test(id)) return reply.code(404).send({ error: "not found" });
const record = await db.get("SELECT ${COLUMNS} FROM records WHERE id = ${ph(1)} AND kind = ${ph(2)}", [Number(id), ${kind}]);`;
  const readCode = options.publicRead
    ? `${find}
if (!record) return reply.code(404).send({ error: "not found" });
return record;`
    : `${find}
if (!record || record.org_id !== user.org_id) return reply.code(404).send({ error: "not found" });
return record;`;
  const read: Endpoint = {
    method: "GET",
    path: place.item,
    summary: `One ${ctx.place.singular}`,
    ...(options.publicRead ? { description: "Public: anyone may read the board." } : {}),
    access: options.publicRead ? "public" : "user",
    parameters: [{ name: "id", in: "path", required: true, schema: STR }],
    responses: {
      "200": json("the record", RECORD_SCHEMA),
      "404": err("no such record in your organisation"),
      ...guarded(options.publicRead ? "public" : "user"),
    },
    python: views.read,
    node: options.publicRead
      ? nodeRoute("GET", place.item, readCode)
      : nodeUserRoute("GET", place.item, readCode),
  };
  const update: Endpoint = {
    method: "PATCH",
    path: place.item,
    summary: `Change a ${ctx.place.singular}`,
    access: "user",
    parameters: [{ name: "id", in: "path", required: true, schema: STR }],
    body: { contentType: "application/json", schema: body, required: true },
    responses: {
      "200": json("changed", RECORD_SCHEMA),
      "400": err("title missing or too long"),
      "404": err("no such record in your organisation"),
      ...guarded("user"),
    },
    python: views.update,
    node: nodeUserRoute(
      "PATCH",
      place.item,
      `${find}
if (!record || record.org_id !== user.org_id) return reply.code(404).send({ error: "not found" });
${validate}
const changed = await db.get("UPDATE records SET title = ${ph(1)}, body = ${ph(2)} WHERE id = ${ph(3)} RETURNING ${COLUMNS}", [title, text, record.id]);
publish_${place.id}("updated", changed);
return changed;`,
    ),
  };
  return { create, support: [read, update] };
}

function indent(text: string, by = 2): string {
  const pad = " ".repeat(by);
  return text
    .split("\n")
    .map((line) => (line ? pad + line : line))
    .join("\n");
}

/**
 * The channel's top-level code for the server's stack. A Flask server needs the family's Python versions of
 * any numbering, delivery or greeting code (`flask`); a family without them is Fastify-only.
 */
export function channelTop(
  place: ChannelPlace,
  spec: ChannelSpec,
  ctx: BuildContext,
  flask?: Omit<FlaskChannelSpec, "admission" | "delivery">,
  nodeBefore = "",
): { node?: string; python?: string } {
  if (ctx.server.stack === "node") return { node: nodeBefore + channelCode(place, spec, ctx) };
  const nodeOnly = (spec.stamp || spec.deliver || spec.onSubscribe || spec.extra) && !flask;
  if (nodeOnly) throw new Error(`${place.channel}: this family's channels live on the Fastify servers`);
  return {
    python: flaskChannelCode(place, { admission: spec.admission, delivery: spec.delivery, ...flask }, ctx),
  };
}
