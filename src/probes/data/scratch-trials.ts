import { randomUUID } from "node:crypto";
import type { Table } from "../../map/system-map.ts";
import type { DataAssumption } from "./assumptions.ts";
import { findTable } from "./naming.ts";
import type { ScratchDatabase } from "./target-database.ts";
import { quoteName } from "./target-database.ts";

// Trials on a scratch database: write the row the assumption says cannot exist (a duplicate, an orphan,
// a negative count, an unknown state, a NULL) and see whether the database refuses it. Every trial is
// rolled back; the live database is never written.

export interface ScratchTrial {
  accepted: boolean;
  /** The statements tried, with their parameters, for evidence and reproduction. */
  statements: Array<{ sql: string; parameters: unknown[] }>;
  error?: string;
  description: string;
}

type TypeClass = "integer" | "number" | "text" | "uuid" | "boolean" | "time" | "json" | "blob";

function typeClass(type: string): TypeClass {
  const lower = type.toLowerCase();
  if (/int|serial/.test(lower)) return "integer";
  if (/real|floa|doub|num|dec|money/.test(lower)) return "number";
  if (/uuid/.test(lower)) return "uuid";
  if (/bool/.test(lower)) return "boolean";
  if (/date|time/.test(lower)) return "time";
  if (/json/.test(lower)) return "json";
  if (/blob|bytea|binary/.test(lower)) return "blob";
  return "text";
}

let sequence = 0;

/** A value of the column's type no existing row has (for unique columns the trial must not trip over). */
async function freshValue(scratch: ScratchDatabase, table: Table, column: string): Promise<unknown> {
  const type = typeClass(table.columns.find((entry) => entry.name === column)?.type ?? "");
  sequence += 1;
  if (type === "integer" || type === "number") {
    const rows = await scratch.query(`SELECT MAX(${quoteName(column)}) AS top FROM ${quoteName(table.name)}`);
    const top = Number(rows[0]?.top ?? 0);
    return (Number.isFinite(top) ? Math.trunc(top) : 0) + 100_000 + sequence;
  }
  if (type === "uuid") return randomUUID();
  if (type === "boolean") return scratch.kind === "postgres" ? false : 0;
  if (type === "time") return new Date(Date.UTC(2000, 0, 1, 0, 0, sequence)).toISOString();
  if (type === "json") return JSON.stringify({ qaas: sequence });
  if (type === "blob") return Buffer.from([sequence % 256]);
  return `qaas-${sequence}-${randomUUID().slice(0, 8)}`;
}

/** Whether the database fills this column itself (rowid alias, serial, identity, a default). */
function generated(table: Table, column: Table["columns"][number], kind: ScratchDatabase["kind"]): boolean {
  if (column.primary_key) {
    const keys = table.columns.filter((entry) => entry.primary_key);
    if (kind === "sqlite" && keys.length === 1 && column.type.toUpperCase() === "INTEGER") return true;
    if (column.default) return true;
  }
  return false;
}

/**
 * A row for `table`: a copy of an existing row (or a minimal new one), with generated keys left to the
 * database and every other unique column given a fresh value, then `overrides` applied.
 */
async function rowFor(
  scratch: ScratchDatabase,
  table: Table,
  tables: readonly Table[],
  overrides: Record<string, unknown>,
  keep: readonly string[],
): Promise<Record<string, unknown> | string> {
  const existing = (await scratch.query(`SELECT * FROM ${quoteName(table.name)} LIMIT 1`))[0];
  const row: Record<string, unknown> = {};
  for (const column of table.columns) {
    if (generated(table, column, scratch.kind)) continue;
    if (existing && column.name in existing) row[column.name] = existing[column.name];
    else if (!column.nullable && (column.default === null || column.default === undefined)) {
      row[column.name] = await freshValue(scratch, table, column.name);
    }
  }
  for (const key of table.foreign_keys) {
    const column = key.columns[0];
    if (!column || key.columns.length !== 1 || column in overrides) continue;
    if (row[column] !== undefined && row[column] !== null) continue;
    const parent = findTable(tables, key.references_table);
    if (!parent || !key.references_columns[0]) continue;
    const id = await referencedId(scratch, table, tables, column);
    if (id !== undefined) row[column] = id;
    else if (!table.columns.find((entry) => entry.name === column)?.nullable) {
      return `no ${parent.name} row to reference from ${table.name}.${column}`;
    }
  }
  const uniqueColumns = new Set<string>();
  for (const column of table.columns) {
    if (column.primary_key && !generated(table, column, scratch.kind)) uniqueColumns.add(column.name);
  }
  for (const index of table.indexes)
    if (index.unique) for (const column of index.columns) uniqueColumns.add(column);
  for (const column of uniqueColumns) {
    if (keep.includes(column) || column in overrides || !table.columns.some((entry) => entry.name === column))
      continue;
    row[column] = await freshValue(scratch, table, column);
  }
  return { ...row, ...overrides };
}

/** An id of an existing parent row when `column` is a single-column foreign key of `table`. */
async function referencedId(
  scratch: ScratchDatabase,
  table: Table,
  tables: readonly Table[],
  column: string,
): Promise<unknown> {
  const key = table.foreign_keys.find((entry) => entry.columns.length === 1 && entry.columns[0] === column);
  const parent = key ? findTable(tables, key.references_table) : undefined;
  const parentColumn = key?.references_columns[0];
  if (!parent || !parentColumn) return undefined;
  const found = await scratch.query(
    `SELECT ${quoteName(parentColumn)} AS id FROM ${quoteName(parent.name)} LIMIT 1`,
  );
  return found[0]?.id;
}

function insertStatement(scratch: ScratchDatabase, table: Table, row: Record<string, unknown>) {
  const columns = Object.keys(row);
  const placeholders = columns.map((_, index) => (scratch.kind === "postgres" ? `$${index + 1}` : "?"));
  const sql =
    columns.length === 0
      ? `INSERT INTO ${quoteName(table.name)} DEFAULT VALUES`
      : `INSERT INTO ${quoteName(table.name)} (${columns.map(quoteName).join(", ")}) VALUES (${placeholders.join(", ")})`;
  return { sql, parameters: columns.map((column) => normalizeParameter(row[column])) };
}

function normalizeParameter(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  return value;
}

/** Runs the trial that would break `assumption`; undefined with a reason when none can be built. */
export async function scratchTrial(
  scratch: ScratchDatabase,
  tables: readonly Table[],
  assumption: DataAssumption,
): Promise<ScratchTrial | string> {
  const table = findTable(tables, assumption.table);
  if (!table) return `table ${assumption.table} is not in the schema`;
  const column = assumption.columns[0]!;
  const where = `${table.name}.${assumption.columns.join(", ")}`;
  switch (assumption.kind) {
    case "unique": {
      const shared: Record<string, unknown> = {};
      // A reference in the key (`club_id` of `(club_id, code)`) names an existing parent, or the rows would
      // be refused for the missing parent instead of the duplicate.
      for (const name of assumption.columns)
        shared[name] =
          (await referencedId(scratch, table, tables, name)) ?? (await freshValue(scratch, table, name));
      const first = await rowFor(scratch, table, tables, shared, assumption.columns);
      if (typeof first === "string") return first;
      const second = await rowFor(scratch, table, tables, shared, assumption.columns);
      if (typeof second === "string") return second;
      const statements = [insertStatement(scratch, table, first), insertStatement(scratch, table, second)];
      const result = await scratch.trial(statements);
      return { ...result, statements, description: `two ${table.name} rows with the same ${where}` };
    }
    case "foreign-key": {
      const references = assumption.references!;
      const parent = findTable(tables, references.table);
      if (!parent) return `referenced table ${references.table} is not in the schema`;
      const missing = await freshValue(scratch, parent, references.column);
      const row = await rowFor(scratch, table, tables, { [column]: missing }, []);
      if (typeof row === "string") return row;
      const statements = [insertStatement(scratch, table, row)];
      const result = await scratch.trial(statements);
      return {
        ...result,
        statements,
        description: `a ${table.name} row whose ${column} (${String(missing)}) matches no ${parent.name}.${references.column}`,
      };
    }
    case "non-negative": {
      const row = await rowFor(scratch, table, tables, { [column]: -1 }, []);
      if (typeof row === "string") return row;
      const statements = [insertStatement(scratch, table, row)];
      const result = await scratch.trial(statements);
      return { ...result, statements, description: `a ${table.name} row with ${column} = -1` };
    }
    case "allowed-values": {
      const value = `qaas_invalid_${sequence + 1}`;
      const row = await rowFor(scratch, table, tables, { [column]: value }, []);
      if (typeof row === "string") return row;
      const statements = [insertStatement(scratch, table, row)];
      const result = await scratch.trial(statements);
      return { ...result, statements, description: `a ${table.name} row with ${column} = '${value}'` };
    }
    case "not-null": {
      const row = await rowFor(scratch, table, tables, { [column]: null }, []);
      if (typeof row === "string") return row;
      const statements = [insertStatement(scratch, table, row)];
      const result = await scratch.trial(statements);
      return { ...result, statements, description: `a ${table.name} row with ${column} = NULL` };
    }
    case "ordered":
      // A copy storing an inverted pair only repeats what the schema shows; the rule is the application's.
      return "an ordered pair is shown through the application only";
  }
}
