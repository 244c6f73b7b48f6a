import { brief, type OracleClient, type Person } from "../../oracles/oracle.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Endpoint, JsonSchema, TableSchema } from "../endpoint.ts";
import { err, guarded, json, obj, STR } from "../schemas.ts";

// The data-integrity families' resource: a table of the variant's own (so its counters, totals and
// versions are real columns), a create that inserts one of the caller's rows and a read of one row by id.
// Both are correct; each family adds the operation under test (a transition, an update) beside them.

export interface OwnedColumn {
  name: string;
  /** Column DDL after the name (`INTEGER NOT NULL DEFAULT 0`). */
  ddl: string;
  /** Documented type of the column in answers. */
  schema: JsonSchema;
}

export interface OwnedTable {
  name: string;
  columns: OwnedColumn[];
  /** Turns a fetched `row` into its answer (a JSON text column parsed), per stack; empty when none. */
  decode?: { node: string; python: string };
  /** The read answers the row's `version` as an ETag too, for clients that send it back in If-Match. */
  etag?: boolean;
}

export const ID_PATTERN = "^[0-9]{1,9}$";

export function selectList(table: OwnedTable): string {
  return ["id", "title", ...table.columns.map((column) => column.name)].join(", ");
}

export function answerSchema(table: OwnedTable): JsonSchema {
  return obj({
    id: { type: "integer" },
    title: STR,
    ...Object.fromEntries(table.columns.map((column) => [column.name, column.schema])),
  });
}

export function tableDdl(table: OwnedTable): TableSchema {
  const columns = table.columns.map((column) => `${column.name} ${column.ddl}`).join(", ");
  return {
    name: table.name,
    ddl: `CREATE TABLE ${table.name} (id {key}, owner_id INTEGER NOT NULL, title TEXT NOT NULL, ${columns});`,
  };
}

/** Code that sets `row` to the caller's own row under the path's `id`, or answers 404. */
export function ownRowOr404(ctx: BuildContext, table: OwnedTable): { node: string; python: string } {
  const sql = `SELECT ${selectList(table)} FROM ${table.name} WHERE id = ${ctx.ph(1)} AND owner_id = ${ctx.ph(2)}`;
  return {
    node: `const id = String(request.params["id"]);
let row = /^[0-9]{1,9}$/.test(id) ? await db.get("${sql}", [Number(id), user.id]) : undefined;
if (!row) return reply.code(404).send({ error: "not found" });`,
    python: `row = db.get("${sql}", (int(id), user["id"])) if re.fullmatch(r"[0-9]{1,9}", id) else None
if row is None:
    return jsonify(error="not found"), 404`,
  };
}

/** Code that reads the row again after a write and answers it (`status` 200). */
export function answerRow(ctx: BuildContext, table: OwnedTable): { node: string; python: string } {
  const sql = `SELECT ${selectList(table)} FROM ${table.name} WHERE id = ${ctx.ph(1)}`;
  return {
    node: `row = await db.get("${sql}", [row.id]);
${table.decode?.node ?? ""}
return row;`,
    python: `row = db.get("${sql}", (row["id"],))
${table.decode?.python ?? ""}
return jsonify(row)`,
  };
}

export interface CreateSpec {
  /** Body properties beside `title`, with the code that validates them (sets `problem` on a bad value). */
  body: Record<string, JsonSchema>;
  /** Extra columns the insert writes, each from a code expression per stack. */
  insert: Array<{ column: string; node: string; python: string }>;
  validate?: { node: string; python: string };
  /** Body properties the document requires beside `title` (the `validate` code refuses their absence). */
  required?: string[];
}

/** `POST base` (one row of the caller's) and `GET base/{id}` (one of the caller's rows). */
export function ownedResource(ctx: BuildContext, table: OwnedTable, create: CreateSpec): Endpoint[] {
  const { ph, place } = ctx;
  const schema = answerSchema(table);
  const columns = ["owner_id", "title", ...create.insert.map((item) => item.column)];
  const values = columns.map((_, index) => ph(index + 1)).join(", ");
  const insertSql = `INSERT INTO ${table.name} (${columns.join(", ")}) VALUES (${values}) RETURNING ${selectList(table)}`;
  const createEndpoint: Endpoint = {
    method: "POST",
    path: place.base,
    summary: `Create a ${place.singular}`,
    access: "user",
    body: {
      contentType: "application/json",
      schema: obj({ title: { type: "string", maxLength: 80 }, ...create.body }, [
        "title",
        ...(create.required ?? []),
      ]),
      required: true,
    },
    responses: {
      "201": json(`the new ${place.singular}`, schema),
      "400": err("a field is missing or out of range"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "POST",
      place.base,
      `const body = request.body ?? {};
const title = body.title;
if (typeof title !== "string" || title.length === 0 || title.length > 80) {
  return reply.code(400).send({ error: "title must be a string of 1 to 80 characters" });
}
${create.validate?.node ?? ""}
let row = await db.get("${insertSql}", [user.id, title${create.insert.map((item) => `, ${item.node}`).join("")}]);
${table.decode?.node ?? ""}
return reply.code(201).send(row);`,
    ),
    python: pyRoute(
      "POST",
      place.base,
      `user = require_user()
body = request.get_json(silent=True) or {}
title = body.get("title")
if not isinstance(title, str) or not 0 < len(title) <= 80:
    return jsonify(error="title must be a string of 1 to 80 characters"), 400
${create.validate?.python ?? ""}
row = db.get("${insertSql}", (user["id"], title${create.insert.map((item) => `, ${item.python}`).join("")}))
${table.decode?.python ?? ""}
return jsonify(row), 201`,
    ),
  };
  const lookup = ownRowOr404(ctx, table);
  const readPath = `${place.base}/{id}`;
  const read: Endpoint = {
    method: "GET",
    path: readPath,
    summary: `Read one of my ${place.plural}`,
    access: "user",
    parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", pattern: ID_PATTERN } }],
    responses: {
      "200": { ...json(`the ${place.singular}`, schema), ...(table.etag ? { headers: { ETag: STR } } : {}) },
      "404": err("no such record of the caller's"),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      readPath,
      `${lookup.node}
${table.decode?.node ?? ""}
${table.etag ? 'reply.header("ETag", `"v${row.version}"`);' : ""}
return row;`,
    ),
    python: pyRoute(
      "GET",
      readPath,
      `user = require_user()
${lookup.python}
${table.decode?.python ?? ""}
answer = jsonify(row)
${table.etag ? 'answer.headers["ETag"] = f\'"v{row["version"]}"\'' : ""}
return answer`,
    ),
  };
  return [createEndpoint, read];
}

/** Creates a row as `person` and answers its representation. */
export async function createOwn(
  client: OracleClient,
  person: Person,
  path: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const answer = await client.ask({ as: person, method: "POST", path, json: body });
  const row = answer.json as Record<string, unknown> | null;
  if (answer.status !== 201 || !row || row.id === undefined)
    throw new Error(`could not create at ${path}: ${brief(answer)}`);
  return row;
}

/** Reads the row back through its item path. */
export async function readOwn(
  client: OracleClient,
  person: Person,
  path: string,
  id: unknown,
): Promise<Record<string, unknown>> {
  const answer = await client.ask({ as: person, path: `${path}/${String(id)}` });
  const row = answer.json as Record<string, unknown> | null;
  if (answer.status !== 200 || !row)
    throw new Error(`could not read ${path}/${String(id)}: ${brief(answer)}`);
  return row;
}
