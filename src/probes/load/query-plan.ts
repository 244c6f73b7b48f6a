import Database from "better-sqlite3";
import pg from "pg";
import type { Table } from "../../map/system-map.ts";
import { analyzeStatement } from "../code-access/sql-shape.ts";
import { parameterCount, tokenizeSql } from "../code-access/sql-tokens.ts";
import { findTable } from "../data/naming.ts";
import type { DatabaseHandle } from "../data/target-database.ts";

// How the database would run a statement, asked without running it: EXPLAIN QUERY PLAN on a read-only
// SQLite connection, EXPLAIN (generic plan, sequential scans discouraged) in a read-only PostgreSQL
// transaction. A full scan of a table filtered on a column no index leads with is an unindexed query.

export interface FullScan {
  table: string;
  /** Columns the statement filters or joins this table on, the most selective (equality) first. */
  filterColumns: string[];
  /** Of those, the ones no index (nor the primary key) starts with. */
  unindexedColumns: string[];
  /** The plan line that shows the scan. */
  detail: string;
}

/** A whole table read and sorted to answer a page of it: ORDER BY a column no index starts with. */
export interface FullSort {
  table: string;
  column: string;
  /** The plan lines that show it (the scan and the sort). */
  detail: string;
}

export interface PlanResult {
  plan: string[];
  scans: FullScan[];
  sorts: FullSort[];
  error?: string;
}

/**
 * The table and column a statement orders by first, when it pages (LIMIT) through one table's rows: the
 * column no index starts with is the candidate for a sort of the whole table on every request.
 */
function pagedOrder(
  sql: string,
  tables: readonly Table[],
): { table: Table; column: string; names: string[] } | undefined {
  const shape = analyzeStatement(sql);
  if (!shape.hasOrderBy || !shape.hasLimit || shape.hasGroupBy) return undefined;
  const match = sql.match(/\border\s+by\s+(?:"?(\w+)"?\.)?"?(\w+)"?/i);
  if (!match) return undefined;
  const [, qualifier, column] = match;
  const reference = qualifier
    ? shape.tables.find(
        (entry) => entry.alias === qualifier.toLowerCase() || entry.name === qualifier.toLowerCase(),
      )
    : shape.tables.length === 1
      ? shape.tables[0]
      : undefined;
  const table = reference ? findTable(tables, reference.name) : undefined;
  const found = table?.columns.find((entry) => entry.name.toLowerCase() === column!.toLowerCase());
  if (!table || !found || isIndexed(table, found.name)) return undefined;
  // Plans name a table by its alias when it has one.
  return { table, column: found.name, names: [table.name, ...(reference?.alias ? [reference.alias] : [])] };
}

const READ_VERBS = /^\s*(select|with|update|delete)\b/i;

/** Whether a column is the first column of the primary key or of an index. */
export function isIndexed(table: Table, column: string): boolean {
  const lower = column.toLowerCase();
  const keys = table.columns.filter((entry) => entry.primary_key);
  if (keys[0]?.name.toLowerCase() === lower) return true;
  return table.indexes.some((index) => index.columns[0]?.toLowerCase() === lower);
}

function filterColumnsOf(
  sql: string,
  tables: readonly Table[],
  tableName: string,
  alias: string | undefined,
): string[] {
  const shape = analyzeStatement(sql);
  const table = findTable(tables, tableName);
  const columns = new Set<string>();
  const consider = (reference: { qualifier?: string; column: string }) => {
    const qualifier = reference.qualifier;
    if (qualifier !== undefined && qualifier !== alias && qualifier !== tableName.toLowerCase()) return;
    const column = table?.columns.find((entry) => entry.name.toLowerCase() === reference.column);
    if (column) columns.add(column.name);
  };
  // Most selective first: equality and IN, then ranges and prefixes; `!=` can use no index and is left out.
  const rank = (operator: string) => (operator === "=" || operator === "==" || operator === "in" ? 0 : 1);
  const usable = shape.filters.filter((filter) => filter.operator !== "!=" && filter.operator !== "<>");
  for (const filter of [...usable].sort((left, right) => rank(left.operator) - rank(right.operator)))
    consider(filter.column);
  for (const join of shape.joins) {
    consider(join.left);
    consider(join.right);
  }
  return [...columns];
}

/** `?`, `:x`, `$1` → NULL: SQLite plans `col = NULL` exactly as `col = ?`. */
function withNullParameters(sql: string): string {
  return tokenizeSql(sql).some((token) => token.kind === "parameter")
    ? sql.replace(/\?\d*|(?<![:\w]):[A-Za-z_]\w*|@[A-Za-z_]\w*|\$\d+/g, "NULL")
    : sql;
}

export async function explainStatement(
  handle: DatabaseHandle,
  tables: readonly Table[],
  sql: string,
): Promise<PlanResult> {
  if (!READ_VERBS.test(sql) || /;\s*\S/.test(sql.trim().replace(/;+\s*$/, ""))) {
    return {
      plan: [],
      scans: [],
      sorts: [],
      error: "only one SELECT, UPDATE or DELETE statement is explained",
    };
  }
  return handle.kind === "sqlite"
    ? explainSqlite(handle.file, tables, sql)
    : explainPostgres(handle.url, tables, sql);
}

function explainSqlite(file: string, tables: readonly Table[], sql: string): PlanResult {
  let database: Database.Database | undefined;
  try {
    database = new Database(file, { readonly: true, fileMustExist: true });
    const rows = database
      .prepare(`EXPLAIN QUERY PLAN ${withNullParameters(sql.trim().replace(/;+\s*$/, ""))}`)
      .all() as Array<{ detail: string }>;
    const shape = analyzeStatement(sql);
    const scans: FullScan[] = [];
    for (const { detail } of rows) {
      const scan = detail.match(/^SCAN (?:TABLE )?("?[\w$]+"?)(?: AS (\w+))?\s*$/);
      const automatic = detail.match(/^SEARCH (?:TABLE )?("?[\w$]+"?)(?: AS (\w+))? USING AUTOMATIC/);
      const found = scan ?? automatic;
      if (!found) continue;
      const name = found[1]!.replace(/"/g, "").toLowerCase();
      const reference = shape.tables.find((entry) => entry.alias === name || entry.name === name);
      const table = findTable(tables, reference?.name ?? name);
      if (!table) continue;
      const filterColumns = filterColumnsOf(sql, tables, table.name, reference?.alias);
      scans.push({
        table: table.name,
        filterColumns,
        unindexedColumns: filterColumns.filter((column) => !isIndexed(table, column)),
        detail,
      });
    }
    const plan = rows.map((row) => row.detail);
    const order = pagedOrder(sql, tables);
    const scanned =
      order &&
      plan.find((line) =>
        order.names.some((name) =>
          new RegExp(`^SCAN (?:TABLE )?"?${name}"?(?: AS \\w+)?\\s*$`, "i").test(line),
        ),
      );
    const sorted = plan.find((line) => /^USE TEMP B-TREE FOR (?:RIGHT PART OF )?ORDER BY/.test(line));
    const sorts =
      order && scanned && sorted
        ? [{ table: order.table.name, column: order.column, detail: `${scanned}; ${sorted}` }]
        : [];
    return { plan, scans, sorts };
  } catch (error) {
    return { plan: [], scans: [], sorts: [], error: (error as Error).message };
  } finally {
    database?.close();
  }
}

interface PostgresPlanNode {
  "Node Type"?: string;
  "Relation Name"?: string;
  Alias?: string;
  Filter?: string;
  Plans?: PostgresPlanNode[];
}

async function explainPostgres(url: string, tables: readonly Table[], sql: string): Promise<PlanResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  const statement = sql.trim().replace(/;+\s*$/, "");
  try {
    await client.connect();
    await client.query("BEGIN READ ONLY");
    // Discourage sequential scans: where an index can serve the filter, the plan then shows it.
    await client.query("SET LOCAL enable_seqscan = off");
    await client.query("SET LOCAL plan_cache_mode = force_generic_plan");
    let numbered = statement;
    let counter = 0;
    if (/\?/.test(numbered)) numbered = numbered.replace(/\?/g, () => `$${++counter}`);
    const parameters = parameterCount(numbered).positional;
    let rows: Array<Record<string, unknown>>;
    if (parameters > 0) {
      await client.query(`PREPARE qaas_plan AS ${numbered}`);
      rows = (
        await client.query(
          `EXPLAIN (FORMAT JSON) EXECUTE qaas_plan(${Array(parameters).fill("NULL").join(", ")})`,
        )
      ).rows;
    } else {
      rows = (await client.query(`EXPLAIN (FORMAT JSON) ${numbered}`)).rows;
    }
    const document = (rows[0]?.["QUERY PLAN"] as Array<{ Plan: PostgresPlanNode }> | undefined)?.[0]?.Plan;
    const plan: string[] = [];
    const scans: FullScan[] = [];
    const walk = (node: PostgresPlanNode | undefined, depth: number) => {
      if (!node) return;
      plan.push(
        `${"  ".repeat(depth)}${node["Node Type"] ?? "?"}${node["Relation Name"] ? ` on ${node["Relation Name"]}` : ""}${node.Filter ? ` (filter ${node.Filter})` : ""}`,
      );
      if (node["Node Type"] === "Seq Scan" && node["Relation Name"]) {
        const table = findTable(tables, node["Relation Name"]);
        if (table) {
          const filterColumns = filterColumnsOf(sql, tables, table.name, node.Alias?.toLowerCase());
          scans.push({
            table: table.name,
            filterColumns,
            unindexedColumns: filterColumns.filter((column) => !isIndexed(table, column)),
            detail: plan[plan.length - 1]!.trim(),
          });
        }
      }
      for (const child of node.Plans ?? []) walk(child, depth + 1);
    };
    walk(document, 0);
    // With sequential scans discouraged, a Sort over a Seq Scan means no index could give the order.
    const order = pagedOrder(sql, tables);
    const scanned = order && plan.find((line) => line.trim().startsWith(`Seq Scan on ${order.table.name}`));
    const sorted = plan.find((line) => /^\s*(?:Incremental )?Sort\b/.test(line));
    const sorts =
      order && scanned && sorted
        ? [{ table: order.table.name, column: order.column, detail: `${sorted.trim()}; ${scanned.trim()}` }]
        : [];
    return { plan, scans, sorts };
  } catch (error) {
    return { plan: [], scans: [], sorts: [], error: (error as Error).message };
  } finally {
    await client.query("ROLLBACK").catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}
