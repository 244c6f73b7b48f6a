import type { Row } from "../../model/row.ts";
import { brief, itemsOf, marker, type OracleClient, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint, TableSchema } from "../endpoint.ts";
import { err, guarded, INT, json, listOf, obj, STR } from "../schemas.ts";

// Uniqueness the application relies on but only its code enforces (CWE-1188's "insecure default" of a
// schema without the key, Rails' and Django's documented caveat that `validates :x, uniqueness: true` is a
// SELECT before the INSERT): the create handler looks for a clash first and answers 409, but another
// write path (a rename, an activation) or a create that never looked stores the duplicate, because the
// table has no UNIQUE constraint. Four scopes: plain (one column), composite (a name per owner), conditional
// ("one active per owner", a partial unique index) and case-insensitive (an address compared with lower()).
// The safe twins run the same code over a table that carries the constraint, and map the refusal to 409.

export type UniqueScope = "plain" | "composite" | "conditional" | "case-insensitive";

export interface UniquenessKnobs {
  scope: UniqueScope;
  /** update: create checks, the PATCH does not; create: nothing checks, a lookup reads the column as one row. */
  gap: "update" | "create";
}

interface ScopeShape {
  /** The column the rule is about (the body field of the same name). */
  column: string;
  /** The WHERE clause of the clash check, the owner's id bound first where it takes one. */
  clash: (ph: (index: number) => string) => string;
  ownerScoped: boolean;
  constraint: (table: string) => { inline: string; after: string };
  example: string;
}

const SCOPES: Record<UniqueScope, ScopeShape> = {
  plain: {
    column: "code",
    clash: (ph) => `code = ${ph(1)}`,
    ownerScoped: false,
    constraint: () => ({ inline: "code TEXT NOT NULL UNIQUE", after: "" }),
    example: "NW-0042",
  },
  composite: {
    column: "name",
    clash: (ph) => `owner_id = ${ph(1)} AND name = ${ph(2)}`,
    ownerScoped: true,
    constraint: (table) => ({
      inline: "name TEXT NOT NULL",
      after: `CREATE UNIQUE INDEX ${table}_owner_name ON ${table} (owner_id, name);`,
    }),
    example: "Quarterly",
  },
  conditional: {
    column: "status",
    clash: (ph) => `owner_id = ${ph(1)} AND status = 'active'`,
    ownerScoped: true,
    constraint: (table) => ({
      inline: "status TEXT NOT NULL DEFAULT 'draft'",
      after: `CREATE UNIQUE INDEX ${table}_one_active ON ${table} (owner_id) WHERE status = 'active';`,
    }),
    example: "active",
  },
  "case-insensitive": {
    column: "handle",
    clash: (ph) => `lower(handle) = lower(${ph(1)})`,
    ownerScoped: false,
    constraint: (table) => ({
      inline: "handle TEXT NOT NULL",
      after: `CREATE UNIQUE INDEX ${table}_handle_ci ON ${table} (lower(handle));`,
    }),
    example: "Ops-Team",
  },
};

/** The error test each stack maps a database refusal with (the safe twins' 409/422). */
export const REFUSED = {
  node: (words: string) => `/${words}/i.test(String(error && error.message))`,
  python: (words: string) => `re.search(r"${words}", str(error), re.I)`,
};

function columnsDdl(scope: UniqueScope, safe: boolean, table: string): TableSchema {
  const shape = SCOPES[scope];
  const plain: Record<UniqueScope, string> = {
    plain: "code TEXT NOT NULL",
    composite: "name TEXT NOT NULL",
    conditional: "status TEXT NOT NULL DEFAULT 'draft'",
    "case-insensitive": "handle TEXT NOT NULL",
  };
  const constraint = shape.constraint(table);
  const ruleColumn = safe ? constraint.inline : plain[scope];
  // Each table has the other columns its resource needs; the rule's column is declared once.
  const others = [
    "title TEXT NOT NULL",
    scope === "conditional" ? "" : "status TEXT NOT NULL DEFAULT 'draft'",
  ]
    .filter(Boolean)
    .join(", ");
  const ddl = `CREATE TABLE ${table} (id {key}, owner_id INTEGER NOT NULL, ${ruleColumn}, ${others}, created_at TEXT NOT NULL);${safe && constraint.after ? `\n${constraint.after}` : ""}`;
  return { name: table, ddl };
}

export function buildUniquenessInCode(row: Row<UniquenessKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { scope, gap } = row.knobs;
  const shape = SCOPES[scope];
  const { ph, place } = ctx;
  const table = place.slug;
  const column = shape.column;
  const base = place.base;
  const item = `${base}/{id}`;
  const fields = "id, title, status, owner_id, created_at" + (column === "status" ? "" : `, ${column}`);
  const checks = gap === "update";
  const checkArgs = shape.ownerScoped
    ? {
        node: `[user.id${column === "status" ? "" : `, value`}]`,
        python: `(user["id"]${column === "status" ? "" : ", value"},)`,
      }
    : { node: "[value]", python: "(value,)" };
  const value = column === "status" ? '"active"' : "value";
  const insert = `INSERT INTO ${table} (owner_id, title, ${column}, created_at) VALUES (${ph(1)}, ${ph(2)}, ${ph(3)}, ${ph(4)}) RETURNING ${fields}`;
  const clashSql = `SELECT id FROM ${table} WHERE ${shape.clash(ph)}`;
  const conflict = "unique|duplicate";
  const nodeClash = checks
    ? `if (await db.get("${clashSql}", ${checkArgs.node})) return reply.code(409).send({ error: "${column} already taken" });\n`
    : "";
  const pyClash = checks
    ? `if db.get("${clashSql}", ${checkArgs.python}):\n    return jsonify(error="${column} already taken"), 409\n`
    : "";
  const nodeValue =
    column === "status"
      ? `if (body.status !== undefined && !["draft", "active"].includes(body.status)) return reply.code(400).send({ error: "status must be draft or active" });
const value = body.status === "active" ? "active" : "draft";`
      : `const value = typeof body.${column} === "string" ? body.${column}.trim() : "";
if (value.length === 0 || value.length > 80) return reply.code(400).send({ error: "${column} is required" });`;
  const pyValue =
    column === "status"
      ? `if body.get("status") is not None and body.get("status") not in ("draft", "active"):
    return jsonify(error="status must be draft or active"), 400
value = "active" if body.get("status") == "active" else "draft"`
      : `value = body.get("${column}") if isinstance(body.get("${column}"), str) else ""
value = value.strip()
if not 0 < len(value) <= 80:
    return jsonify(error="${column} is required"), 400`;
  const nodeCheckActive =
    column === "status" ? `if (value === "active") {\n  ${nodeClash.trim()}\n}\n` : nodeClash;
  const pyCheckActive =
    column === "status" && pyClash
      ? `if value == "active":\n${pyClash.replace(/^/gm, "    ").trimEnd()}\n`
      : pyClash;
  const bodySchema = obj(
    {
      title: { type: "string", maxLength: 80 },
      [column]:
        column === "status"
          ? { type: "string", enum: ["draft", "active"] }
          : { ...STR, example: shape.example },
    },
    column === "status" ? ["title"] : ["title", column],
  );
  const resource = obj({ id: INT, title: STR, status: STR, owner_id: INT, created_at: STR, [column]: STR });
  const create: Endpoint = {
    method: "POST",
    path: base,
    summary: `Create a ${place.singular}`,
    access: "user",
    body: { contentType: "application/json", schema: bodySchema, required: true },
    responses: {
      "201": json(`the new ${place.singular}`, resource),
      "400": err("title or a field missing"),
      "409": err(`the ${column} is taken`),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      base,
      `const body = request.body ?? {};
const title = typeof body.title === "string" ? body.title : "";
if (title.length === 0 || title.length > 80) return reply.code(400).send({ error: "title is required (at most 80 characters)" });
${nodeValue}
${nodeCheckActive}try {
  const row = await db.get("${insert}", [user.id, title, ${value === '"active"' ? "value" : "value"}, new Date().toISOString()]);
  return reply.code(201).send(row);
} catch (error) {
  if (${REFUSED.node(conflict)}) return reply.code(409).send({ error: "${column} already taken" });
  throw error;
}`,
    ),
    python: pyRoute(
      "POST",
      base,
      `user = require_user()
body = request.get_json(silent=True) or {}
title = body.get("title") if isinstance(body.get("title"), str) else ""
if not 0 < len(title) <= 80:
    return jsonify(error="title is required (at most 80 characters)"), 400
${pyValue}
${pyCheckActive}try:
    row = db.get("${insert}", (user["id"], title[:80], value, datetime.utcnow().isoformat()))
except Exception as error:
    if ${REFUSED.python(conflict)}:
        return jsonify(error="${column} already taken"), 409
    raise
return jsonify(row), 201`,
    ),
  };
  const list: Endpoint = {
    method: "GET",
    path: base,
    summary: `List my ${place.plural}`,
    access: "user",
    responses: { "200": json(`my ${place.plural}`, listOf(resource)), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      base,
      `const rows = await db.all("SELECT ${fields} FROM ${table} WHERE owner_id = ${ph(1)} ORDER BY id", [user.id]);
return { items: rows };`,
    ),
    python: pyRoute(
      "GET",
      base,
      `user = require_user()
return jsonify(items=db.all("SELECT ${fields} FROM ${table} WHERE owner_id = ${ph(1)} ORDER BY id", (user["id"],)))`,
    ),
  };
  const update = updateEndpoint(ctx, { table, column, fields, item, resource, conflict });
  const lookup = lookupEndpoint(ctx, { table, column, fields, resource, shape });
  // gap=update: the flaw is the PATCH that skips the check; gap=create: the create that never checks, with a
  // lookup beside it that reads the column as naming one row.
  const endpoint = gap === "update" ? update : create;
  const support = gap === "update" ? [create, list] : [list, lookup];
  const words = {
    plain: `${column} is unique`,
    composite: `name is unique per owner`,
    conditional: `one ${place.singular} per owner is active`,
    "case-insensitive": `handle is unique ignoring case`,
  }[scope];
  return {
    endpoint,
    support,
    tables: [columnsDdl(scope, !vulnerable, table)],
    dataPlaces: [table],
    title: vulnerable
      ? `${table}: the rule that ${words} lives only in code; ${gap === "update" ? "an update" : "a create"} stores duplicates (no unique constraint)`
      : `${table}: ${words}, checked in code and enforced by a unique index`,
    ...(vulnerable ? {} : { why: `a unique index on ${table} refuses the duplicate; the API answers 409` }),
    oracle: (client) => duplicateOracle(client, { scope, gap, base, column }),
  };
}

function updateEndpoint(
  ctx: BuildContext,
  spec: {
    table: string;
    column: string;
    fields: string;
    item: string;
    resource: Record<string, unknown>;
    conflict: string;
  },
): Endpoint {
  const { ph, place } = ctx;
  const { table, column, fields, item, conflict } = spec;
  const sql = `UPDATE ${table} SET ${column} = ${ph(1)} WHERE id = ${ph(2)} AND owner_id = ${ph(3)} RETURNING ${fields}`;
  const schema =
    column === "status"
      ? obj({ status: { type: "string", enum: ["draft", "active"] } })
      : obj({ [column]: { type: "string", maxLength: 80 } });
  return {
    method: "PATCH",
    path: item,
    summary: `Change a ${place.singular}'s ${column}`,
    access: "user",
    body: { contentType: "application/json", schema, required: true },
    responses: {
      "200": json(`the ${place.singular}`, spec.resource),
      "400": err(`${column} missing`),
      "404": err("no such record of yours"),
      "409": err(`the ${column} is taken`),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "PATCH",
      item,
      `const id = Number(request.params["id"]);
if (!Number.isInteger(id)) return reply.code(404).send({ error: "not found" });
const value = (request.body ?? {}).${column};
if (typeof value !== "string" || value.length === 0 || value.length > 80) return reply.code(400).send({ error: "${column} is required" });${
        column === "status"
          ? `
if (!["draft", "active"].includes(value)) return reply.code(400).send({ error: "status must be draft or active" });`
          : ""
      }
try {
  const row = await db.get("${sql}", [value, id, user.id]);
  if (!row) return reply.code(404).send({ error: "not found" });
  return row;
} catch (error) {
  if (${REFUSED.node(conflict)}) return reply.code(409).send({ error: "${column} already taken" });
  throw error;
}`,
    ),
    python: pyRoute(
      "PATCH",
      item,
      `user = require_user()
if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404
value = (request.get_json(silent=True) or {}).get("${column}")
if not isinstance(value, str) or not 0 < len(value) <= 80${column === "status" ? ' or value not in ("draft", "active")' : ""}:
    return jsonify(error="${column} is invalid"), 400
try:
    row = db.get("${sql}", (value, int(id), user["id"]))
except Exception as error:
    if ${REFUSED.python(conflict)}:
        return jsonify(error="${column} already taken"), 409
    raise
if not row:
    return jsonify(error="not found"), 404
return jsonify(row)`,
    ),
  };
}

function lookupEndpoint(
  ctx: BuildContext,
  spec: {
    table: string;
    column: string;
    fields: string;
    resource: Record<string, unknown>;
    shape: ScopeShape;
  },
): Endpoint {
  const { ph, place } = ctx;
  const { table, column, fields, shape } = spec;
  const path = `${place.base}/lookup`;
  const where =
    column === "status"
      ? `owner_id = ${ph(1)} AND status = 'active'`
      : column === "handle"
        ? `lower(handle) = lower(${ph(1)})`
        : shape.ownerScoped
          ? `owner_id = ${ph(1)} AND ${column} = ${ph(2)}`
          : `${column} = ${ph(1)}`;
  const args = shape.ownerScoped
    ? {
        node: column === "status" ? "[user.id]" : "[user.id, value]",
        python: column === "status" ? '(user["id"],)' : '(user["id"], value)',
      }
    : { node: "[value]", python: "(value,)" };
  return {
    method: "GET",
    path,
    summary: column === "status" ? `My active ${place.singular}` : `Find a ${place.singular} by ${column}`,
    access: "user",
    parameters:
      column === "status"
        ? []
        : [{ name: column, in: "query", required: true, schema: { ...STR, example: shape.example } }],
    responses: {
      "200": json(`the ${place.singular}`, spec.resource),
      "404": err("none"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      path,
      `const value = String(request.query[${JSON.stringify(column)}] ?? "");
const row = await db.get("SELECT ${fields} FROM ${table} WHERE ${where}", ${args.node});
if (!row) return reply.code(404).send({ error: "not found" });
return row;`,
    ),
    python: pyRoute(
      "GET",
      path,
      `user = require_user()
value = request.args.get("${column}", "")
row = db.get("SELECT ${fields} FROM ${table} WHERE ${where}", ${args.python})
if not row:
    return jsonify(error="not found"), 404
return jsonify(row)`,
    ),
  };
}

/** Two of alice's rows end up holding the same value under the rule's scope: the table let them. */
async function duplicateOracle(
  client: OracleClient,
  spec: { scope: UniqueScope; gap: "update" | "create"; base: string; column: string },
): Promise<ReturnType<typeof verdict>> {
  const { scope, gap, base, column } = spec;
  const tag = marker("dup");
  const first = scope === "case-insensitive" ? `Team-${tag}` : scope === "conditional" ? "active" : tag;
  const second = scope === "case-insensitive" ? first.toUpperCase() : first;
  const create = (value: string) =>
    client.ask({ as: "alice", method: "POST", path: base, json: { title: `t-${tag}`, [column]: value } });
  const one = await create(first);
  if (one.status !== 201) throw new Error(`first create: ${brief(one)}`);
  let last: Awaited<ReturnType<typeof create>>;
  if (gap === "update") {
    const other = await create(scope === "conditional" ? "draft" : `${tag}-other`);
    if (other.status !== 201) throw new Error(`second create: ${brief(other)}`);
    const id = (other.json as { id: number }).id;
    last = await client.ask({
      as: "alice",
      method: "PATCH",
      path: `${base}/${id}`,
      json: { [column]: second },
    });
  } else {
    last = await create(second);
  }
  const listed = itemsOf(await client.ask({ as: "alice", path: base }));
  const same = listed.filter(
    (row) => String(row[column]).toLowerCase() === first.toLowerCase() && String(row.title) === `t-${tag}`,
  );
  return verdict(same.length >= 2, `${same.length} rows hold ${first}; last write → ${brief(last)}`);
}
