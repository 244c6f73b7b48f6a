import type { Row } from "../../model/row.ts";
import { brief, marker, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { err, guarded, INT, json, listOf, obj, STR } from "../schemas.ts";
import { REFUSED } from "./data-uniqueness.ts";
import { ownedReadEndpoint } from "./owned-read.ts";

// Declared domains without a CHECK (CWE-20, CWE-1173): a quantity that must not go below zero, a
// percentage that must stay within 0..100, a period whose end must not come before its start. The create
// handler validates the rule in code (400); a second write path does not — a PATCH that stores what it is
// given, or a "consume" that subtracts without looking — and the table has no CHECK to stop it. The safe
// twins run the same handlers over a table with the CHECK and answer 422 (409 for a consume) on a refusal.

export type DomainRule = "negative-quantity" | "percentage" | "date-order";

export interface DomainKnobs {
  rule: DomainRule;
  /** update: a PATCH writes the field unchecked; decrement: a consume subtracts (negative-quantity only). */
  gap: "update" | "decrement";
}

interface RuleShape {
  columns: string;
  check: string;
  /** The create handler's validation, per stack (400 on a violation). */
  node: string;
  python: string;
  createBody: Record<string, unknown>;
  properties: Record<string, Record<string, unknown>>;
  /** The PATCH's type and format checks (400): not the rule itself, which is the flaw. */
  patchNode: string;
  patchPython: string;
  /** The PATCH's fields and the value that breaks the rule. */
  patch: Record<string, unknown>;
  broken: (row: Record<string, unknown>) => boolean;
}

const RULES: Record<DomainRule, RuleShape> = {
  "negative-quantity": {
    columns: "quantity INTEGER NOT NULL",
    check: "CHECK (quantity >= 0)",
    node: 'if (!Number.isInteger(body.quantity) || body.quantity < 0 || body.quantity > 1000000) return reply.code(400).send({ error: "quantity must be from 0 to 1000000" });',
    python:
      'if not isinstance(body.get("quantity"), int) or isinstance(body.get("quantity"), bool) or not 0 <= body["quantity"] <= 1000000:\n    return jsonify(error="quantity must be from 0 to 1000000"), 400',
    createBody: { quantity: 5 },
    properties: { quantity: { type: "integer", minimum: 0, maximum: 1000000 } },
    patchNode:
      'if (body.quantity !== undefined && body.quantity !== null && (!Number.isInteger(body.quantity) || body.quantity > 1000000 || body.quantity < -1000000000)) return reply.code(400).send({ error: "quantity must be an integer of at most 1000000" });',
    patchPython:
      'if body.get("quantity") is not None and (not isinstance(body["quantity"], int) or isinstance(body["quantity"], bool) or not -1000000000 <= body["quantity"] <= 1000000):\n    return jsonify(error="quantity must be an integer of at most 1000000"), 400',
    patch: { quantity: -7 },
    broken: (row) => Number(row.quantity) < 0,
  },
  percentage: {
    columns: "discount_pct INTEGER NOT NULL",
    check: "CHECK (discount_pct BETWEEN 0 AND 100)",
    node: 'if (!Number.isInteger(body.discount_pct) || body.discount_pct < 0 || body.discount_pct > 100) return reply.code(400).send({ error: "discount_pct must be from 0 to 100" });',
    python:
      'if not isinstance(body.get("discount_pct"), int) or isinstance(body.get("discount_pct"), bool) or not 0 <= body["discount_pct"] <= 100:\n    return jsonify(error="discount_pct must be from 0 to 100"), 400',
    createBody: { discount_pct: 10 },
    properties: { discount_pct: { type: "integer", minimum: 0, maximum: 100 } },
    patchNode:
      'if (body.discount_pct !== undefined && body.discount_pct !== null && (!Number.isInteger(body.discount_pct) || Math.abs(body.discount_pct) > 1000000000)) return reply.code(400).send({ error: "discount_pct must be an integer" });',
    patchPython:
      'if body.get("discount_pct") is not None and (not isinstance(body["discount_pct"], int) or isinstance(body["discount_pct"], bool) or abs(body["discount_pct"]) > 1000000000):\n    return jsonify(error="discount_pct must be an integer"), 400',
    patch: { discount_pct: 150 },
    broken: (row) => Number(row.discount_pct) > 100,
  },
  "date-order": {
    columns: "starts_on TEXT NOT NULL, ends_on TEXT NOT NULL",
    check: "CHECK (ends_on >= starts_on)",
    node: `const isDate = (v) => typeof v === "string" && /^\\d{4}-\\d{2}-\\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)) && new Date(Date.parse(v)).toISOString().slice(0, 10) === v;
if (!isDate(body.starts_on) || !isDate(body.ends_on) || body.ends_on < body.starts_on) return reply.code(400).send({ error: "ends_on must not come before starts_on" });`,
    python: `try:
    starts = datetime.strptime(str(body.get("starts_on")), "%Y-%m-%d")
    ends = datetime.strptime(str(body.get("ends_on")), "%Y-%m-%d")
except ValueError:
    return jsonify(error="starts_on and ends_on must be dates (YYYY-MM-DD)"), 400
if ends < starts or not re.fullmatch(r"\\d{4}-\\d{2}-\\d{2}", str(body["starts_on"])) or not re.fullmatch(r"\\d{4}-\\d{2}-\\d{2}", str(body["ends_on"])):
    return jsonify(error="ends_on must not come before starts_on"), 400`,
    createBody: { starts_on: "2026-03-01", ends_on: "2026-03-31" },
    properties: {
      starts_on: { type: "string", format: "date" },
      ends_on: { type: "string", format: "date" },
    },
    patchNode: `const isDate = (v) => typeof v === "string" && /^\\d{4}-\\d{2}-\\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)) && new Date(Date.parse(v)).toISOString().slice(0, 10) === v;
if (["starts_on", "ends_on"].some((key) => body[key] !== undefined && body[key] !== null && !isDate(body[key]))) return reply.code(400).send({ error: "dates are YYYY-MM-DD" });`,
    patchPython: `for key in ("starts_on", "ends_on"):
    if body.get(key) is not None:
        try:
            datetime.strptime(str(body[key]), "%Y-%m-%d")
        except ValueError:
            return jsonify(error="dates are YYYY-MM-DD"), 400`,
    patch: { ends_on: "2026-02-01" },
    broken: (row) => String(row.ends_on) < String(row.starts_on),
  },
};

export function buildUncheckedDomain(row: Row<DomainKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const { rule, gap } = row.knobs;
  if (gap === "decrement" && rule !== "negative-quantity")
    throw new Error(`${row.id}: only a quantity is consumed`);
  const shape = RULES[rule];
  const { ph, place } = ctx;
  const table = place.slug;
  const base = place.base;
  const item = `${base}/{id}`;
  const names = Object.keys(shape.properties);
  const fields = `id, title, owner_id, ${names.join(", ")}`;
  const ddl = `CREATE TABLE ${table} (id {key}, owner_id INTEGER NOT NULL, title TEXT NOT NULL, ${shape.columns}, created_at TEXT NOT NULL${vulnerable ? "" : `, ${shape.check}`});`;
  const slots = Array.from({ length: names.length + 3 }, (_, index) => ph(index + 1)).join(", ");
  const insert = `INSERT INTO ${table} (owner_id, title, ${names.join(", ")}, created_at) VALUES (${slots}) RETURNING ${fields}`;
  const resource = obj({ id: INT, title: STR, owner_id: INT, ...shape.properties });
  const create: Endpoint = {
    method: "POST",
    path: base,
    summary: `Create a ${place.singular}`,
    access: "user",
    body: {
      contentType: "application/json",
      schema: obj({ title: { type: "string", maxLength: 80 }, ...shape.properties }),
      required: true,
    },
    responses: {
      "201": json(`the new ${place.singular}`, resource),
      "400": err("a field missing or out of range"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      base,
      `const body = request.body ?? {};
if (typeof body.title !== "string" || body.title.length === 0 || body.title.length > 80) return reply.code(400).send({ error: "title is required (at most 80 characters)" });
${shape.node}
const row = await db.get("${insert}", [user.id, body.title.slice(0, 80), ${names.map((name) => `body.${name}`).join(", ")}, new Date().toISOString()]);
return reply.code(201).send(row);`,
    ),
    python: pyRoute(
      "POST",
      base,
      `user = require_user()
body = request.get_json(silent=True) or {}
if not isinstance(body.get("title"), str) or not 0 < len(body["title"]) <= 80:
    return jsonify(error="title is required (at most 80 characters)"), 400
${shape.python}
row = db.get("${insert}", (user["id"], body["title"][:80], ${names.map((name) => `body["${name}"]`).join(", ")}, datetime.utcnow().isoformat()))
return jsonify(row), 201`,
    ),
  };
  const read = ownedReadEndpoint(ctx, { table, fields, item, resource });
  const list: Endpoint = {
    method: "GET",
    path: base,
    summary: `List my ${place.plural}`,
    access: "user",
    responses: { "200": json(`my ${place.plural}`, listOf(resource)), ...guarded("user") },
    node: nodeUserRoute(
      "GET",
      base,
      `return { items: await db.all("SELECT ${fields} FROM ${table} WHERE owner_id = ${ph(1)} ORDER BY id", [user.id]) };`,
    ),
    python: pyRoute(
      "GET",
      base,
      `user = require_user()
return jsonify(items=db.all("SELECT ${fields} FROM ${table} WHERE owner_id = ${ph(1)} ORDER BY id", (user["id"],)))`,
    ),
  };
  const endpoint =
    gap === "update"
      ? patchEndpoint(ctx, { table, fields, item, resource, shape })
      : consumeEndpoint(ctx, { table, fields, item, resource });
  const words = {
    "negative-quantity": "quantity must not go below zero",
    percentage: "discount_pct must stay within 0..100",
    "date-order": "ends_on must not come before starts_on",
  }[rule];
  return {
    endpoint,
    support: [create, list, read],
    tables: [{ name: table, ddl }],
    dataPlaces: [table],
    title: vulnerable
      ? `${table}: the rule that ${words} is checked on create only; ${gap === "update" ? "an update" : "a consume"} stores a violating value (no CHECK)`
      : `${table}: ${words}, checked on create and by a CHECK constraint`,
    ...(vulnerable
      ? {}
      : {
          why: `${table} has ${shape.check}; the refused write is answered ${gap === "update" ? 422 : 409}`,
        }),
    oracle: async (client) => {
      const made = await client.ask({
        as: "alice",
        method: "POST",
        path: base,
        json: { title: marker("dom"), ...shape.createBody },
      });
      if (made.status !== 201) throw new Error(`create: ${brief(made)}`);
      const id = (made.json as { id: number }).id;
      const write =
        gap === "update"
          ? await client.ask({ as: "alice", method: "PATCH", path: `${base}/${id}`, json: shape.patch })
          : await client.ask({
              as: "alice",
              method: "POST",
              path: `${base}/${id}/consume`,
              json: { amount: 12 },
            });
      const stored = await client.ask({ as: "alice", path: `${base}/${id}` });
      const rowNow = (stored.json ?? {}) as Record<string, unknown>;
      return verdict(shape.broken(rowNow), `write → ${brief(write)}; stored ${JSON.stringify(rowNow)}`);
    },
  };
}

function patchEndpoint(
  ctx: BuildContext,
  spec: { table: string; fields: string; item: string; resource: Record<string, unknown>; shape: RuleShape },
): Endpoint {
  const { ph, place } = ctx;
  const { table, fields, item, shape } = spec;
  const names = Object.keys(shape.properties);
  // The PATCH writes whichever of the rule's fields arrive, each a plain assignment: no range check here.
  const numbered = names.map((name, index) => `${name} = COALESCE(${ph(index + 1)}, ${name})`);
  const sql = `UPDATE ${table} SET ${numbered.join(", ")} WHERE id = ${ph(names.length + 1)} AND owner_id = ${ph(names.length + 2)} RETURNING ${fields}`;
  return {
    method: "PATCH",
    path: item,
    summary: `Change a ${place.singular}`,
    access: "user",
    body: { contentType: "application/json", schema: obj(shape.properties, []), required: true },
    responses: {
      "200": json(`the ${place.singular}`, spec.resource),
      "404": err("no such record of yours"),
      "422": err("the database refused the value"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "PATCH",
      item,
      `const id = Number(request.params["id"]);
if (!Number.isInteger(id)) return reply.code(404).send({ error: "not found" });
const body = request.body ?? {};
${shape.patchNode}
try {
  const row = await db.get("${sql}", [${names.map((name) => `body.${name} ?? null`).join(", ")}, id, user.id]);
  if (!row) return reply.code(404).send({ error: "not found" });
  return row;
} catch (error) {
  if (${REFUSED.node("check")}) return reply.code(422).send({ error: "value out of range" });
  throw error;
}`,
    ),
    python: pyRoute(
      "PATCH",
      item,
      `user = require_user()
if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404
body = request.get_json(silent=True) or {}
if not isinstance(body, dict):
    return jsonify(error="a JSON object is required"), 400
${shape.patchPython}
try:
    row = db.get("${sql}", (${names.map((name) => `body.get("${name}")`).join(", ")}, int(id), user["id"]))
except Exception as error:
    if ${REFUSED.python("check")}:
        return jsonify(error="value out of range"), 422
    raise
if not row:
    return jsonify(error="not found"), 404
return jsonify(row)`,
    ),
  };
}

function consumeEndpoint(
  ctx: BuildContext,
  spec: { table: string; fields: string; item: string; resource: Record<string, unknown> },
): Endpoint {
  const { ph, place } = ctx;
  const { table, fields } = spec;
  const path = `${spec.item}/consume`;
  const sql = `UPDATE ${table} SET quantity = quantity - ${ph(1)} WHERE id = ${ph(2)} AND owner_id = ${ph(3)} RETURNING ${fields}`;
  return {
    method: "POST",
    path,
    summary: `Take units out of a ${place.singular}`,
    access: "user",
    body: {
      contentType: "application/json",
      schema: obj({ amount: { type: "integer", minimum: 1, maximum: 1000000 } }),
      required: true,
    },
    responses: {
      "200": json(`the ${place.singular}`, spec.resource),
      "400": err("amount must be a positive integer"),
      "404": err("no such record of yours"),
      "409": err("not enough units"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      path,
      `const id = Number(request.params["id"]);
if (!Number.isInteger(id)) return reply.code(404).send({ error: "not found" });
const amount = (request.body ?? {}).amount;
if (!Number.isInteger(amount) || amount < 1 || amount > 1000000) return reply.code(400).send({ error: "amount must be a positive integer" });
try {
  const row = await db.get("${sql}", [amount, id, user.id]);
  if (!row) return reply.code(404).send({ error: "not found" });
  return row;
} catch (error) {
  if (${REFUSED.node("check")}) return reply.code(409).send({ error: "not enough units" });
  throw error;
}`,
    ),
    python: pyRoute(
      "POST",
      path,
      `user = require_user()
if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404
amount = (request.get_json(silent=True) or {}).get("amount")
if not isinstance(amount, int) or isinstance(amount, bool) or not 1 <= amount <= 1000000:
    return jsonify(error="amount must be a positive integer"), 400
try:
    row = db.get("${sql}", (amount, int(id), user["id"]))
except Exception as error:
    if ${REFUSED.python("check")}:
        return jsonify(error="not enough units"), 409
    raise
if not row:
    return jsonify(error="not found"), 404
return jsonify(row)`,
    ),
  };
}
