import Database from "better-sqlite3";
import { QaasError } from "../../errors.ts";
import type { Table } from "../../map/system-map.ts";
import { checkConstraintsFromSql } from "./check-constraints.ts";

// The schema a SQLite database actually enforces, read through PRAGMAs on a read-only connection (the
// live application may be using the file at the same time).

interface ColumnRow {
  cid: number;
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

interface ForeignKeyRow {
  id: number;
  seq: number;
  table: string;
  from: string;
  to: string | null;
}

interface IndexRow {
  name: string;
  unique: number;
  /** c: CREATE INDEX; u: a UNIQUE constraint; pk: a PRIMARY KEY constraint. */
  origin: string;
}

interface IndexColumnRow {
  seqno: number;
  name: string | null;
}

export function readSqliteSchema(file: string): Table[] {
  let database: Database.Database;
  try {
    database = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new QaasError(
      "SQLITE_UNREADABLE",
      `cannot open SQLite database ${file} read-only: ${(error as Error).message}`,
    );
  }
  try {
    return schemaOfDatabase(database);
  } finally {
    database.close();
  }
}

/** The schema of an open SQLite database (the caller owns the connection). */
export function schemaOfDatabase(database: Database.Database): Table[] {
  {
    const tables = database
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all() as Array<{ name: string; sql: string | null }>;
    const primaryKeys = new Map<string, string[]>();
    const columnsOf = new Map<string, ColumnRow[]>();
    for (const table of tables) {
      const columns = database
        .prepare(`PRAGMA table_info(${quoteIdentifier(table.name)})`)
        .all() as ColumnRow[];
      columnsOf.set(table.name, columns);
      primaryKeys.set(
        table.name,
        columns
          .filter((column) => column.pk > 0)
          .sort((left, right) => left.pk - right.pk)
          .map((column) => column.name),
      );
    }
    return tables.map((table) => {
      const columns = columnsOf.get(table.name) ?? [];
      const sql = table.sql ?? "";
      const withoutRowid = /\)\s*(?:STRICT\s*,\s*)?WITHOUT\s+ROWID\b[\s\S]*$/i.test(sql);
      const keyCount = primaryKeys.get(table.name)?.length ?? 0;
      return {
        name: table.name,
        columns: columns.map((column) => ({
          name: column.name,
          type: column.type,
          nullable: isNullable(column, keyCount, withoutRowid),
          primary_key: column.pk > 0,
          default: column.dflt_value,
        })),
        foreign_keys: foreignKeysOf(database, table.name, primaryKeys),
        indexes: indexesOf(database, table.name),
        checks: checkConstraintsFromSql(sql),
      };
    });
  }
}

/**
 * SQLite lets NULL into a PRIMARY KEY column unless it is the rowid alias (a lone INTEGER PRIMARY KEY)
 * or the table is WITHOUT ROWID: report what the database enforces, not what the DDL suggests.
 */
function isNullable(column: ColumnRow, keyCount: number, withoutRowid: boolean): boolean {
  if (column.notnull === 1) return false;
  if (column.pk === 0) return true;
  const isRowidAlias = keyCount === 1 && column.type.toUpperCase() === "INTEGER";
  return !(isRowidAlias || withoutRowid);
}

function foreignKeysOf(
  database: Database.Database,
  table: string,
  primaryKeys: ReadonlyMap<string, string[]>,
): Table["foreign_keys"] {
  const rows = database
    .prepare(`PRAGMA foreign_key_list(${quoteIdentifier(table)})`)
    .all() as ForeignKeyRow[];
  const byId = new Map<number, ForeignKeyRow[]>();
  for (const row of rows) byId.set(row.id, [...(byId.get(row.id) ?? []), row]);
  return [...byId.entries()]
    .sort(([left], [right]) => left - right)
    .map(([, group]) => {
      const ordered = group.sort((left, right) => left.seq - right.seq);
      const referenced = ordered[0]?.table ?? "";
      // `REFERENCES parent` without columns means the parent's primary key.
      const implicit = primaryKeys.get(referenced) ?? [];
      return {
        columns: ordered.map((row) => row.from),
        references_table: referenced,
        references_columns: ordered.map((row, index) => row.to ?? implicit[index] ?? "rowid"),
      };
    });
}

function indexesOf(database: Database.Database, table: string): Table["indexes"] {
  const rows = database.prepare(`PRAGMA index_list(${quoteIdentifier(table)})`).all() as IndexRow[];
  // Primary keys are reported on their columns; every other index, including the automatic ones behind
  // UNIQUE constraints, is listed.
  return rows
    .filter((row) => row.origin !== "pk")
    .sort((left, right) => left.name.localeCompare(right.name))
    .map((row) => {
      const columns = database
        .prepare(`PRAGMA index_info(${quoteIdentifier(row.name)})`)
        .all() as IndexColumnRow[];
      return {
        name: row.name,
        columns: columns
          .sort((left, right) => left.seqno - right.seqno)
          .map((column) => column.name ?? "<expression>"),
        unique: row.unique === 1,
      };
    });
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
