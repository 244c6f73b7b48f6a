import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, obj, STR } from "../schemas.ts";
import type { WrongStatusKnobs } from "./api-status.ts";
import { ownedCollection, ownRecordRead, recordShape } from "./records.ts";

// Wrong statuses an API shows without any document to promise the right one (RFC 9110 §15): a read of a
// record that does not exist answered 200 with nothing in it (`null`, `{}`) instead of 404, and a creation
// answered 200 where every other creation of the API answers 201 Created. Safe twins answer 404 and 201;
// look-alikes are a search that finds nothing (200 `[]` is its right answer) and a POST that saves the
// caller's one settings object (an upsert answers 200 with the same object every time, not a creation).

type ConventionFlaw = "missing-200-empty" | "create-200-inconsistent";

export function isConventionFlaw(flaw: WrongStatusKnobs["flaw"]): flaw is ConventionFlaw {
  return flaw === "missing-200-empty" || flaw === "create-200-inconsistent";
}

export function buildConventionStatus(row: Row<WrongStatusKnobs>, ctx: BuildContext): Built {
  const { flaw, lookalike } = row.knobs;
  if (row.label === "vulnerable" && lookalike)
    throw new Error(`${row.id}: a look-alike (${lookalike}) is a safe row`);
  if (flaw === "missing-200-empty") {
    if (lookalike === "upsert-200") throw new Error(`${row.id}: upsert-200 is a look-alike of creations`);
    return lookalike === "search-empty" ? emptySearch(ctx) : missingRead(row, ctx);
  }
  if (lookalike === "search-empty") throw new Error(`${row.id}: search-empty is a look-alike of reads`);
  return lookalike === "upsert-200" ? settingsUpsert(ctx) : creation(row, ctx);
}

/**
 * The flaw's definition, asked the same way of every row of the read flaw: a lookup of something that
 * does not exist answers 2xx with nothing in it, where the lookup of something that exists answers one
 * object (a search's list is not one object).
 */
function emptyOnMissing(path: (value: string) => string, known: string, missing: string) {
  return async (client: Parameters<Built["oracle"]>[0]) => {
    const real = await client.ask({ as: "alice", path: path(known) });
    const absent = await client.ask({ as: "alice", path: path(missing) });
    const one = real.status === 200 && real.json !== null && typeof real.json === "object";
    const single = one && !Array.isArray(real.json);
    const empty =
      absent.status >= 200 &&
      absent.status < 300 &&
      (absent.text.trim() === "" ||
        absent.json === null ||
        (typeof absent.json === "object" && Object.keys(absent.json as object).length === 0));
    return verdict(single && empty, `existing → ${brief(real)}; missing → ${brief(absent)}`);
  };
}

function missingRead(row: Row<WrongStatusKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { place } = ctx;
  const shape = recordShape("sequential");
  const path = `${place.base}/{id}`;
  const empty = row.knobs.empty ?? "null";
  const missing = vulnerable
    ? empty === "null"
      ? { node: 'return reply.type("application/json").send("null");', python: "return jsonify(None)" }
      : { node: "return {};", python: "return jsonify({})" }
    : {
        node: 'return reply.code(404).send({ error: "not found" });',
        python: 'return jsonify(error="not found"), 404',
      };
  const endpoint = ownRecordRead(ctx, missing);
  return {
    endpoint,
    support: ownedCollection(ctx, shape),
    title: vulnerable
      ? `Wrong status: reading a ${place.singular} that does not exist answers 200 with ${empty === "null" ? "null" : "an empty object"}`
      : `${capitalise(place.plural)}: a missing one is answered on its own`,
    ...(vulnerable ? {} : { why: "answers 404 as it should" }),
    oracle: async (client) => {
      const list = await client.ask({ as: "alice", path: place.base });
      const items = (list.json as { items?: Array<{ id: unknown }> } | null)?.items ?? [];
      const known = String(items[0]?.id ?? "1");
      return emptyOnMissing((id) => path.replace("{id}", id), known, "987654")(client);
    },
    records: [{ kind: place.kind, title: "Kept" }],
  };
}

function emptySearch(ctx: BuildContext): Built {
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const shape = recordShape("sequential");
  const path = `${place.base}/search`;
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary: `Search my ${place.plural} by title`,
    access: "user",
    parameters: [{ name: "q", in: "query", required: true, schema: STR }],
    responses: {
      "200": json("the matches, possibly none", { type: "array", items: shape.schema }),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      path,
      `const q = String(request.query["q"] ?? "");
const rows = await db.all("SELECT ${shape.columns} FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)} ORDER BY id", [${kind}, user.id]);
return rows.filter((row) => q.length > 0 && row.title.toLowerCase().includes(q.toLowerCase()));`,
    ),
    python: pyRoute(
      "GET",
      path,
      `user = require_user()
q = request.args.get("q", "").lower()
rows = db.all("SELECT ${shape.columns} FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)} ORDER BY id", (${kind}, user["id"]))
return jsonify([row for row in rows if q and q in row["title"].lower()])`,
    ),
  };
  return {
    endpoint,
    records: [{ kind: place.kind, title: "Kept" }],
    title: `${capitalise(place.plural)}: a search that matches nothing answers 200 []`,
    why: "an empty list is the right answer to a search that finds nothing",
    oracle: emptyOnMissing((q) => `${path}?q=${encodeURIComponent(q)}`, "kept", "zzqx-nothing"),
  };
}

function creation(row: Row<WrongStatusKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { place } = ctx;
  const [create, list] = ownedCollection(ctx, recordShape("sequential"));
  const status = vulnerable ? 200 : 201;
  const endpoint: Endpoint = {
    ...create!,
    node: create!.node.replace(
      "return reply.code(201).send(row);",
      `return reply.code(${status}).send(row);`,
    ),
    python: create!.python.replace("return jsonify(row), 201", `return jsonify(row), ${status}`),
  };
  if (vulnerable && (endpoint.node === create!.node || endpoint.python === create!.python))
    throw new Error(`${row.id}: the collection's creation code changed; update the 200 substitution`);
  return {
    endpoint,
    support: [list!],
    title: vulnerable
      ? `Wrong status: creating a ${place.singular} answers 200 where the API's other creations answer 201`
      : `Creating a ${place.singular} answers 201`,
    ...(vulnerable ? {} : { why: "answers 201 Created like the API's other creations" }),
    oracle: createsWith200(place.base, { title: "Fresh" }),
  };
}

function settingsUpsert(ctx: BuildContext): Built {
  const { ph, place } = ctx;
  const kind = JSON.stringify(place.kind);
  const path = `${place.base}/preferences`;
  const select = `SELECT id, title AS theme FROM records WHERE kind = ${ph(1)} AND owner_id = ${ph(2)}`;
  const insert = `INSERT INTO records (uid, kind, owner_id, org_id, title, created_at) VALUES (${[1, 2, 3, 4, 5, 6].map(ph).join(", ")})`;
  const answer = obj({ id: INT, theme: STR });
  const save: Endpoint = {
    method: "POST",
    path,
    summary: `Save my ${place.singular} preferences`,
    access: "user",
    body: {
      contentType: "application/json",
      schema: obj({ theme: { type: "string", maxLength: 40 } }),
      required: true,
    },
    responses: {
      "200": json("the saved preferences", answer),
      "400": err("theme missing"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      path,
      `const theme = (request.body ?? {}).theme;
if (typeof theme !== "string" || theme.length === 0 || theme.length > 40) return reply.code(400).send({ error: "theme must be 1 to 40 characters" });
const found = await db.get("${select}", [${kind}, user.id]);
if (found) await db.run("UPDATE records SET title = ${ph(1)} WHERE id = ${ph(2)}", [theme, found.id]);
else await db.run("${insert}", [crypto.randomUUID(), ${kind}, user.id, user.org_id, theme, new Date().toISOString()]);
return await db.get("${select}", [${kind}, user.id]);`,
    ),
    python: pyRoute(
      "POST",
      path,
      `user = require_user()
theme = (request.get_json(silent=True) or {}).get("theme")
if not isinstance(theme, str) or not 0 < len(theme) <= 40:
    return jsonify(error="theme must be 1 to 40 characters"), 400
found = db.get("${select}", (${kind}, user["id"]))
if found:
    db.run("UPDATE records SET title = ${ph(1)} WHERE id = ${ph(2)}", (theme, found["id"]))
else:
    db.run("${insert}", (str(uuid.uuid4()), ${kind}, user["id"], user["org_id"], theme, datetime.utcnow().isoformat()))
return jsonify(db.get("${select}", (${kind}, user["id"])))`,
    ),
  };
  const read: Endpoint = {
    method: "GET",
    path,
    summary: `My ${place.singular} preferences`,
    access: "user",
    responses: { "200": json("the preferences", answer), "404": err("none saved yet"), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      path,
      `const found = await db.get("${select}", [${kind}, user.id]);
return found ?? reply.code(404).send({ error: "no preferences saved yet" });`,
    ),
    python: pyRoute(
      "GET",
      path,
      `user = require_user()
found = db.get("${select}", (${kind}, user["id"]))
return jsonify(found) if found else (jsonify(error="no preferences saved yet"), 404)`,
    ),
  };
  return {
    endpoint: save,
    support: [read],
    title: `Saving ${place.singular} preferences answers 200`,
    why: "an upsert of the caller's one preferences object is no creation: 200 with the same object each time",
    oracle: createsWith200(path, { theme: "dark" }),
  };
}

/**
 * The creation flaw's definition, asked alike of every row: two POSTs each answer 200 with an object
 * carrying an id, and the ids differ (each POST made a new object; an upsert answers the same one).
 */
function createsWith200(path: string, body: Record<string, unknown>) {
  return async (client: Parameters<Built["oracle"]>[0]) => {
    const first = await client.ask({ as: "alice", method: "POST", path, json: body });
    const second = await client.ask({ as: "alice", method: "POST", path, json: body });
    const idOf = (answer: typeof first) => (answer.json as { id?: unknown } | null)?.id;
    const created =
      first.status === 200 &&
      second.status === 200 &&
      idOf(first) !== undefined &&
      idOf(second) !== undefined &&
      idOf(first) !== idOf(second);
    return verdict(created, `first → ${brief(first)}; second → ${brief(second)}`);
  };
}

function capitalise(text: string): string {
  return text[0]!.toUpperCase() + text.slice(1);
}
