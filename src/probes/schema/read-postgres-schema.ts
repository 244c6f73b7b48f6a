import pg from "pg";
import { QaasError } from "../../errors.ts";
import type { Table } from "../../map/system-map.ts";
import { checkExpressionFromDefinition } from "./check-constraints.ts";

// The schema a PostgreSQL database enforces, from the catalogs (information_schema for tables, pg_catalog
// for what information_schema cannot say: index uniqueness, expression indexes, CHECK text).

export interface PostgresColumnRow {
  table_name: string;
  column_name: string;
  data_type: string;
  nullable: boolean;
  column_default: string | null;
}

export interface PostgresConstraintRow {
  table_name: string;
  constraint_name: string;
  /** p: primary key, f: foreign key, c: check. */
  constraint_type: "p" | "f" | "c";
  columns: string[];
  references_table: string | null;
  references_columns: string[] | null;
  definition: string;
}

export interface PostgresIndexRow {
  table_name: string;
  index_name: string;
  is_unique: boolean;
  columns: string[];
}

export interface PostgresSchemaRows {
  tables: string[];
  columns: PostgresColumnRow[];
  constraints: PostgresConstraintRow[];
  indexes: PostgresIndexRow[];
}

const TABLES_SQL = `
SELECT table_name::text AS table_name
FROM information_schema.tables
WHERE table_schema = $1 AND table_type = 'BASE TABLE'
ORDER BY table_name`;

const COLUMNS_SQL = `
SELECT c.relname::text AS table_name,
       a.attname::text AS column_name,
       format_type(a.atttypid, a.atttypmod) AS data_type,
       NOT a.attnotnull AS nullable,
       pg_get_expr(d.adbin, d.adrelid) AS column_default
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
ORDER BY c.relname, a.attnum`;

// Column lists are cast to text[] so the driver parses them into arrays (it leaves name[] as a string).
const CONSTRAINTS_SQL = `
SELECT c.relname::text AS table_name,
       con.conname::text AS constraint_name,
       con.contype::text AS constraint_type,
       ARRAY(SELECT a.attname::text
             FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
             JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             ORDER BY k.ord) AS columns,
       fc.relname::text AS references_table,
       CASE WHEN con.contype = 'f' THEN
         ARRAY(SELECT a.attname::text
               FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
               JOIN pg_catalog.pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum
               ORDER BY k.ord)
       END AS references_columns,
       pg_get_constraintdef(con.oid, true) AS definition
FROM pg_catalog.pg_constraint con
JOIN pg_catalog.pg_class c ON c.oid = con.conrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_class fc ON fc.oid = con.confrelid
WHERE n.nspname = $1 AND con.contype IN ('p', 'f', 'c')
ORDER BY c.relname, con.conname`;

// Key columns only (not INCLUDE columns); an expression key column is printed as its expression.
const INDEXES_SQL = `
SELECT t.relname::text AS table_name,
       i.relname::text AS index_name,
       ix.indisunique AS is_unique,
       ARRAY(SELECT COALESCE(a.attname::text, pg_get_indexdef(ix.indexrelid, k.ord::int, true))
             FROM unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
             LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum AND k.attnum > 0
             WHERE k.ord <= ix.indnkeyatts
             ORDER BY k.ord) AS columns
FROM pg_catalog.pg_index ix
JOIN pg_catalog.pg_class t ON t.oid = ix.indrelid
JOIN pg_catalog.pg_class i ON i.oid = ix.indexrelid
JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
WHERE n.nspname = $1 AND NOT ix.indisprimary
ORDER BY t.relname, i.relname`;

export async function readPostgresSchema(url: string, options: { schema?: string } = {}): Promise<Table[]> {
  const schema = options.schema ?? "public";
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    statement_timeout: 30_000,
  });
  try {
    await client.connect();
  } catch (error) {
    throw new QaasError("POSTGRES_UNREACHABLE", `cannot connect to PostgreSQL: ${(error as Error).message}`);
  }
  try {
    const [tables, columns, constraints, indexes] = await Promise.all([
      client.query<{ table_name: string }>(TABLES_SQL, [schema]),
      client.query<PostgresColumnRow>(COLUMNS_SQL, [schema]),
      client.query<PostgresConstraintRow>(CONSTRAINTS_SQL, [schema]),
      client.query<PostgresIndexRow>(INDEXES_SQL, [schema]),
    ]);
    return tablesFromPostgresRows({
      tables: tables.rows.map((row) => row.table_name),
      columns: columns.rows,
      constraints: constraints.rows,
      indexes: indexes.rows,
    });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Pure: catalog rows → tables. Separate from the queries so it is testable without a server. */
export function tablesFromPostgresRows(rows: PostgresSchemaRows): Table[] {
  return rows.tables.map((name) => {
    const constraints = rows.constraints.filter((row) => row.table_name === name);
    const primaryKey = new Set(
      constraints.filter((row) => row.constraint_type === "p").flatMap((row) => row.columns),
    );
    return {
      name,
      columns: rows.columns
        .filter((row) => row.table_name === name)
        .map((row) => ({
          name: row.column_name,
          type: row.data_type,
          nullable: row.nullable,
          primary_key: primaryKey.has(row.column_name),
          default: row.column_default,
        })),
      foreign_keys: constraints
        .filter((row) => row.constraint_type === "f")
        .map((row) => ({
          columns: row.columns,
          references_table: row.references_table ?? "",
          references_columns: row.references_columns ?? [],
        })),
      indexes: rows.indexes
        .filter((row) => row.table_name === name)
        .map((row) => ({ name: row.index_name, columns: row.columns, unique: row.is_unique })),
      checks: constraints
        .filter((row) => row.constraint_type === "c")
        .map((row) => checkExpressionFromDefinition(row.definition)),
    };
  });
}
