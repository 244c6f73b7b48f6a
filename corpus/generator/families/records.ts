import { brief, type OracleClient, type Person } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, DocResponse, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, listOf, obj, STR } from "../schemas.ts";

// The owned-record resource many variants share a shape with: a collection under the variant's place that
// a signed-in user creates in and lists their own entries of. These operations are correct; the variants
// add the operation under test beside them.

export type IdStyle = "sequential" | "random";

export interface RecordShape {
  /** Columns selected for an answer, and the column an id travels as. */
  columns: string;
  idColumn: "id" | "uid";
  idPattern: string;
  schema: Record<string, unknown>;
}

export function recordShape(ids: IdStyle): RecordShape {
  return ids === "sequential"
    ? {
        columns: "id, uid, title, status, owner_id",
        idColumn: "id",
        idPattern: "^[0-9]{1,9}$",
        schema: obj({ id: INT, uid: STR, title: STR, status: STR, owner_id: INT }),
      }
    : {
        columns: "uid AS id, title, status, owner_id",
        idColumn: "uid",
        idPattern: "^[0-9a-f-]{36}$",
        schema: obj({ id: STR, title: STR, status: STR, owner_id: INT }),
      };
}

/**
 * `POST base` (create one of the caller's own) and `GET base` (list the caller's own). With `org` scope
 * the base holds `{org}`: only members of that org create in it, and the list is the org's.
 */
export function ownedCollection(
  ctx: BuildContext,
  shape: RecordShape,
  base = ctx.place.base,
  scope: "owner" | "org" = "owner",
  /** Code the create runs once the row is stored (`row` in scope), before it answers. */
  afterInsert: { node: string; python: string } = { node: "", python: "" },
): Endpoint[] {
  const { ph } = ctx;
  const kind = JSON.stringify(ctx.place.kind);
  const guard =
    scope === "org"
      ? {
          node: 'if (String(user.org_id) !== String(request.params["org"])) return reply.code(404).send({ error: "not found" });\n',
          python: 'if str(user["org_id"]) != str(org):\n    return jsonify(error="not found"), 404\n',
        }
      : { node: "", python: "" };
  const column = scope === "org" ? "org_id" : "owner_id";
  const who =
    scope === "org"
      ? { node: "user.org_id", python: 'user["org_id"]' }
      : { node: "user.id", python: 'user["id"]' };
  const parameters =
    scope === "org" ? [{ name: "org", in: "path" as const, required: true, schema: { type: "string" } }] : [];
  const notMember: Record<string, DocResponse> =
    scope === "org" ? { "404": err("not a member of that org") } : {};
  const create: Endpoint = {
    method: "POST",
    path: base,
    summary: `Create a ${ctx.place.singular}`,
    access: "user",
    parameters,
    body: {
      contentType: "application/json",
      schema: obj({ title: { type: "string", maxLength: 80 } }),
      required: true,
    },
    responses: {
      "201": json(`the new ${ctx.place.singular}`, shape.schema),
      "400": err("title missing or longer than 80 characters"),
      ...notMember,
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      base,
      `${guard.node}const title = (request.body ?? {}).title;
if (typeof title !== "string" || title.length === 0 || title.length > 80) {
  return reply.code(400).send({ error: "title must be a string of 1 to 80 characters" });
}
const row = await db.get(
  "INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}, ${ph(5)}, ${ph(6)}) RETURNING ${shape.columns}",
  [crypto.randomUUID(), ${kind}, user.id, user.org_id, title, new Date().toISOString()],
);
${afterInsert.node}return reply.code(201).send(row);`,
    ),
    python: pyRoute(
      "POST",
      base,
      `user = require_user()
${guard.python}title = (request.get_json(silent=True) or {}).get("title")
if not isinstance(title, str) or not 0 < len(title) <= 80:
    return jsonify(error="title must be a string of 1 to 80 characters"), 400
row = db.get(
    "INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}, ${ph(5)}, ${ph(6)}) RETURNING ${shape.columns}",
    (str(uuid.uuid4()), ${kind}, user["id"], user["org_id"], title, datetime.utcnow().isoformat()),
)
${afterInsert.python}return jsonify(row), 201`,
    ),
  };
  const list: Endpoint = {
    method: "GET",
    path: base,
    summary: `List my ${ctx.place.plural}`,
    access: "user",
    parameters,
    responses: {
      "200": json(`the caller's ${ctx.place.plural}`, listOf(shape.schema)),
      ...notMember,
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      base,
      `${guard.node}const rows = await db.all("SELECT ${shape.columns} FROM records WHERE kind = ${ph(1)} AND ${column} = ${ph(2)} ORDER BY id", [${kind}, ${who.node}]);
return { items: rows };`,
    ),
    python: pyRoute(
      "GET",
      base,
      `user = require_user()
${guard.python}rows = db.all("SELECT ${shape.columns} FROM records WHERE kind = ${ph(1)} AND ${column} = ${ph(2)} ORDER BY id", (${kind}, ${who.python}))
return jsonify(items=rows)`,
    ),
  };
  return [create, list];
}

/** Creates a record as `person` through the collection and answers its id. */
export async function createAs(
  client: OracleClient,
  person: Person,
  path: string,
  title: string,
): Promise<string> {
  const answer = await client.ask({ as: person, method: "POST", path, json: { title } });
  const id = (answer.json as { id?: unknown } | null)?.id;
  if (answer.status !== 201 || id === undefined)
    throw new Error(`could not create at ${path}: ${brief(answer)}`);
  return String(id);
}

/** The caller's own record with this id, read back through the list. */
export async function ownRecord(
  client: OracleClient,
  person: Person,
  path: string,
  id: string,
): Promise<Record<string, unknown> | undefined> {
  const answer = await client.ask({ as: person, path });
  const items = ((answer.json as { items?: Array<Record<string, unknown>> } | null)?.items ?? []) as Array<
    Record<string, unknown>
  >;
  return items.find((item) => String(item.id) === id);
}

/** What a read answers when the caller has no record under the id asked for, per stack. */
export interface MissingAnswer {
  node: string;
  python: string;
}

/**
 * `GET base/{id}`: one of the caller's own sequential-id records, and `missing` when there is none. The
 * wrong-status variants differ only in that answer.
 */
export function ownRecordRead(ctx: BuildContext, missing: MissingAnswer): Endpoint {
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const shape = recordShape("sequential");
  const path = `${place.base}/{id}`;
  return {
    method: "GET",
    path,
    summary: `Read one of my ${place.plural}`,
    access: "user",
    parameters: [{ name: "id", in: "path", required: true, schema: STR }],
    responses: {
      "200": json(`the ${place.singular}`, shape.schema),
      "404": err("no such record of the caller's"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      path,
      `const id = String(request.params["id"]);
const row = /^[0-9]{1,9}$/.test(id)
  ? await db.get("SELECT ${shape.columns} FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", [${kind}, Number(id), user.id])
  : undefined;
if (!row) ${missing.node}
return row;`,
    ),
    python: pyRoute(
      "GET",
      path,
      `user = require_user()
row = db.get("SELECT ${shape.columns} FROM records WHERE kind = ${ph(1)} AND id = ${ph(2)} AND owner_id = ${ph(3)}", (${kind}, int(id), user["id"])) if re.fullmatch(r"[0-9]{1,9}", id) else None
if row is None:
    ${missing.python}
return jsonify(row)`,
    ),
  };
}
