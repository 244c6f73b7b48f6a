import type { Row } from "../../model/row.ts";
import { brief, verdict } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint, JsonSchema } from "../endpoint.ts";
import { err, guarded, INT, json, obj } from "../schemas.ts";
import {
  answerRow,
  answerSchema,
  createOwn,
  ID_PATTERN,
  type OwnedTable,
  ownedResource,
  ownRowOr404,
  readOwn,
  tableDdl,
} from "./owned-table.ts";

// Derived fields kept on write and not recomputed when their parts change (CWE-1250-style stale copies;
// the "denormalised total" pitfall every ORM guide warns about): an order's total from quantity × unit
// price, a slot's end from its start and duration, an invoice's total from its lines, a basket's count of
// lines. The create computes the derived value; the vulnerable update writes the parts only, so the stored
// total now disagrees with them. The safe twin recomputes it in the same UPDATE.

export interface DerivedKnobs {
  relation: "product" | "sum" | "lines-sum" | "lines-count" | "lines-product";
  method: "PATCH" | "PUT";
}

interface Relation {
  parts: string[];
  derived: string;
  /** Column DDL and schema per part. */
  partSchema: JsonSchema;
  lines: boolean;
  /** The numeric fields of one line (validated as integers in range). */
  lineNumbers?: string[];
  /** The derived value from the parts, per stack (`b` holds the parts). */
  compute: { node: string; python: string };
  create: Record<string, unknown>;
  update: Record<string, unknown>;
  words: string;
}

const NUMBER = { type: "integer", minimum: 0, maximum: 10000 };
const LINES = {
  type: "array",
  maxItems: 20,
  items: obj({ sku: { type: "string", maxLength: 40 }, amount: NUMBER }),
};

const PRICED_LINES = {
  type: "array",
  maxItems: 20,
  items: obj({ sku: { type: "string", maxLength: 40 }, quantity: NUMBER, unit_price: NUMBER }),
};

const RELATIONS: Record<DerivedKnobs["relation"], Relation> = {
  "lines-product": {
    parts: ["lines"],
    derived: "total",
    partSchema: PRICED_LINES,
    lines: true,
    lineNumbers: ["quantity", "unit_price"],
    compute: {
      node: "b.lines.reduce((sum, line) => sum + line.quantity * line.unit_price, 0)",
      python: 'sum(line["quantity"] * line["unit_price"] for line in b["lines"])',
    },
    create: { lines: [{ sku: "A-1", quantity: 2, unit_price: 15 }] },
    update: {
      lines: [
        { sku: "A-1", quantity: 3, unit_price: 15 },
        { sku: "B-2", quantity: 1, unit_price: 40 },
      ],
    },
    words: "total (the sum of quantity × unit price over its lines)",
  },
  product: {
    parts: ["quantity", "unit_price"],
    derived: "total",
    partSchema: NUMBER,
    lines: false,
    compute: { node: "b.quantity * b.unit_price", python: 'b["quantity"] * b["unit_price"]' },
    create: { quantity: 3, unit_price: 7 },
    update: { quantity: 5, unit_price: 11 },
    words: "total (quantity × unit price)",
  },
  sum: {
    parts: ["start_minute", "duration_minutes"],
    derived: "end_minute",
    partSchema: NUMBER,
    lines: false,
    compute: {
      node: "b.start_minute + b.duration_minutes",
      python: 'b["start_minute"] + b["duration_minutes"]',
    },
    create: { start_minute: 540, duration_minutes: 30 },
    update: { start_minute: 600, duration_minutes: 45 },
    words: "end (start + duration)",
  },
  "lines-sum": {
    parts: ["lines"],
    derived: "total",
    partSchema: LINES,
    lines: true,
    compute: {
      node: "b.lines.reduce((sum, line) => sum + line.amount, 0)",
      python: 'sum(line["amount"] for line in b["lines"])',
    },
    create: {
      lines: [
        { sku: "A-1", amount: 12 },
        { sku: "B-2", amount: 30 },
      ],
    },
    update: {
      lines: [
        { sku: "A-1", amount: 12 },
        { sku: "C-3", amount: 55 },
        { sku: "D-4", amount: 8 },
      ],
    },
    words: "total (sum of its lines)",
  },
  "lines-count": {
    parts: ["lines"],
    derived: "line_count",
    partSchema: LINES,
    lines: true,
    compute: { node: "b.lines.length", python: 'len(b["lines"])' },
    create: { lines: [{ sku: "A-1", amount: 12 }] },
    update: {
      lines: [
        { sku: "A-1", amount: 12 },
        { sku: "C-3", amount: 55 },
        { sku: "D-4", amount: 8 },
      ],
    },
    words: "line count",
  },
};

/** Validation of the parts present in `b`; `partial` lets a PATCH leave some out. */
function validation(relation: Relation, partial: boolean): { node: string; python: string } {
  const numbers = relation.lineNumbers ?? ["amount"];
  const node = relation.parts
    .map((part) => {
      const check = relation.lines
        ? `!Array.isArray(b.${part}) || b.${part}.length > 20 || !b.${part}.every((line) => line && typeof line.sku === "string" && line.sku.length <= 40 && ${numbers.map((field) => `Number.isInteger(line.${field}) && line.${field} >= 0 && line.${field} <= 10000`).join(" && ")})`
        : `!Number.isInteger(b.${part}) || b.${part} < 0 || b.${part} > 10000`;
      const guard = partial ? `b.${part} !== undefined && (${check})` : check;
      return `if (${guard}) return reply.code(400).send({ error: "${part} is out of range" });`;
    })
    .join("\n");
  const python = relation.parts
    .map((part) => {
      const check = relation.lines
        ? `not isinstance(b.get("${part}"), list) or len(b["${part}"]) > 20 or not all(isinstance(line, dict) and isinstance(line.get("sku"), str) and len(line["sku"]) <= 40 and ${numbers.map((field) => `isinstance(line.get("${field}"), int) and not isinstance(line["${field}"], bool) and 0 <= line["${field}"] <= 10000`).join(" and ")} for line in b["${part}"])`
        : `not isinstance(b.get("${part}"), int) or isinstance(b["${part}"], bool) or not 0 <= b["${part}"] <= 10000`;
      const guard = partial ? `"${part}" in b and (${check})` : check;
      return `if ${guard}:\n    return jsonify(error="${part} is out of range"), 400`;
    })
    .join("\n");
  return { node, python };
}

export function buildStaleDerivedField(row: Row<DerivedKnobs>, ctx: BuildContext): Built {
  const vulnerable = row.label === "vulnerable";
  const relation = RELATIONS[row.knobs.relation];
  const { ph, place } = ctx;
  const table: OwnedTable = {
    name: place.slug,
    columns: [
      ...relation.parts.map((part) => ({
        name: part,
        ddl: relation.lines ? "TEXT NOT NULL DEFAULT '[]'" : "INTEGER NOT NULL DEFAULT 0",
        schema: relation.partSchema,
      })),
      { name: relation.derived, ddl: "INTEGER NOT NULL DEFAULT 0", schema: INT },
    ],
    ...(relation.lines
      ? {
          decode: {
            node: "row.lines = JSON.parse(row.lines);",
            python: 'row["lines"] = json.loads(row["lines"])',
          },
        }
      : {}),
  };
  const stored = (part: string, stack: "node" | "python") =>
    relation.lines
      ? stack === "node"
        ? `JSON.stringify(b.${part})`
        : `json.dumps(b["${part}"])`
      : stack === "node"
        ? `b.${part}`
        : `b["${part}"]`;
  const createBody = Object.fromEntries(relation.parts.map((part) => [part, relation.partSchema]));
  const support = ownedResource(ctx, table, {
    body: createBody,
    validate: {
      node: `const b = body;\n${validation(relation, false).node}`,
      python: `b = body\n${validation(relation, false).python}`,
    },
    insert: [
      ...relation.parts.map((part) => ({
        column: part,
        node: stored(part, "node"),
        python: stored(part, "python"),
      })),
      { column: relation.derived, node: relation.compute.node, python: relation.compute.python },
    ],
  });
  const partial = row.knobs.method === "PATCH";
  const path = `${place.base}/{id}`;
  // A PATCH merges the sent parts into the stored ones; a PUT replaces them all.
  const merge = {
    node: `const b = { ...row, ...(request.body ?? {}) };`,
    python: `b = {**row, **(request.get_json(silent=True) or {})}`,
  };
  const check = validation(relation, partial);
  const assignments = relation.parts.map((part, index) => `${part} = ${ph(index + 1)}`);
  const setParts = vulnerable
    ? assignments
    : [...assignments, `${relation.derived} = ${ph(relation.parts.length + 1)}`];
  const sql = `UPDATE ${table.name} SET ${setParts.join(", ")} WHERE id = ${ph(setParts.length + 1)}`;
  const params = (stack: "node" | "python") => [
    ...relation.parts.map((part) => stored(part, stack)),
    ...(vulnerable ? [] : [relation.compute[stack]]),
    stack === "node" ? "row.id" : 'row["id"]',
  ];
  const lookup = ownRowOr404(ctx, table);
  const answer = answerRow(ctx, table);
  const decodeStored = relation.lines
    ? { node: "row.lines = JSON.parse(row.lines);\n", python: 'row["lines"] = json.loads(row["lines"])\n' }
    : { node: "", python: "" };
  const endpoint: Endpoint = {
    method: row.knobs.method,
    path,
    summary: `${partial ? "Change" : "Replace"} the ${relation.parts.join(" and ").replaceAll("_", " ")} of one of my ${place.plural}`,
    description: `The ${relation.words} follows the parts it is made of.`,
    access: "user",
    alwaysDocumented: true,
    parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", pattern: ID_PATTERN } }],
    body: {
      contentType: "application/json",
      schema: obj(createBody, partial ? [] : relation.parts),
      required: true,
    },
    responses: {
      "200": json(`the ${place.singular}`, answerSchema(table)),
      "400": err("a part is out of range"),
      "404": err("no such record of the caller's"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      row.knobs.method,
      path,
      `${lookup.node}
${decodeStored.node}${merge.node}
${check.node}
await db.run("${sql}", [${params("node").join(", ")}]);
${answer.node}`,
    ),
    python: pyRoute(
      row.knobs.method,
      path,
      `user = require_user()
${lookup.python}
${decodeStored.python}${merge.python}
${check.python}
db.run("${sql}", (${params("python").join(", ")},))
${answer.python}`,
    ),
  };
  return {
    endpoint,
    support,
    tables: [tableDdl(table)],
    title: vulnerable
      ? `Stale derived field: ${row.knobs.method} of the parts leaves the ${relation.words} as it was on create`
      : `${row.knobs.method} of the parts recomputes the ${relation.words}`,
    ...(vulnerable
      ? {}
      : { why: `the UPDATE writes ${relation.derived} from the new parts in the same statement` }),
    oracle: async (client) => {
      const created = await createOwn(client, "alice", place.base, { title: "derived", ...relation.create });
      const answer = await client.ask({
        as: "alice",
        method: row.knobs.method,
        path: `${place.base}/${String(created.id)}`,
        json: partial ? relation.update : { title: "derived", ...relation.update },
      });
      if (answer.status !== 200) throw new Error(`update failed: ${brief(answer)}`);
      const after = await readOwn(client, "alice", place.base, created.id);
      const expected = relation.lines
        ? row.knobs.relation === "lines-count"
          ? (after.lines as unknown[]).length
          : (after.lines as Array<Record<string, number>>).reduce(
              (sum, line) =>
                sum +
                (row.knobs.relation === "lines-product" ? line.quantity! * line.unit_price! : line.amount!),
              0,
            )
        : row.knobs.relation === "product"
          ? Number(after.quantity) * Number(after.unit_price)
          : Number(after.start_minute) + Number(after.duration_minutes);
      return verdict(
        Number(after[relation.derived]) !== expected,
        `${relation.derived} ${String(after[relation.derived])}, parts say ${expected}`,
      );
    },
  };
}
