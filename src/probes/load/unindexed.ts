import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation, Table } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { operationKey } from "../api/operation-index.ts";
import { clonePrepared } from "../api/request-builder.ts";
import { analyzeStatement } from "../code-access/sql-shape.ts";
import { normalizeStatement } from "../code-access/sql-tokens.ts";
import type { DatabaseHandle } from "../data/target-database.ts";
import { databaseOf, loadTables, quoteName, readOnly } from "../data/target-database.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { surfaceBudget } from "../http/run-http.ts";
import { asSchema } from "../schema-values/json-schema.ts";
import { validValue } from "../schema-values/valid-value.ts";
import { baseStats, untilBudget } from "../session/probe-run.ts";
import { loadFinding } from "./load-findings.ts";
import type { LoadRun } from "./load-run.ts";
import { cleanUp, limitParameter, openLoadRun, reach, readOperations, sample } from "./load-run.ts";
import type { FullScan, FullSort } from "./query-plan.ts";
import { explainStatement } from "./query-plan.ts";

// find_unindexed: the statements each read operation actually runs (from the statement log), each shape
// explained once; a full scan of a table filtered on a column no index starts with is reported at the
// operation that ran it (a sequential scan with no filter, a `LIKE '%…'` or a filter an index covers is not).

export interface UnindexedOptions {
  operation?: string;
  max_operations?: number;
  max_requests?: number;
}

const NOT_A_FILTER =
  /^(page|offset|cursor|after|before|sort|order|order_?by|sort_?by|fields|include|expand|format|lang|locale)$/i;

interface SeenShape {
  shape: string;
  statement: string;
  operations: Operation[];
  exchange: HttpExchange;
}

export async function findUnindexed(
  context: ToolContext,
  options: UnindexedOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const handle = databaseOf(context);
  if (typeof handle === "string") return `query plans need the database: ${handle}`;
  const { tables } = await loadTables(context, handle);
  const load = await openLoadRun(
    context,
    "find_unindexed",
    options.max_requests ?? surfaceBudget(context, 500),
  );
  if (typeof load === "string") return load;
  if (!load.log)
    return {
      candidates: [],
      stats: {
        ...baseStats(load.run),
        skipped: "no statement log: the queries behind each operation cannot be seen",
      },
    };
  const shapes = new Map<string, SeenShape>();
  const operations = readOperations(context, options.operation).slice(
    0,
    options.max_operations ?? surfaceBudget(context, 100),
  );
  let observed = 0;
  try {
    await untilBudget(load.run, async () => {
      for (const operation of operations) {
        if (context.signal.aborted) break;
        for (const query of await queriesOf(load, operation)) {
          observed += 1;
          for (const statement of query.window) {
            const shape = normalizeStatement(statement);
            const known = shapes.get(shape);
            if (known) {
              if (!known.operations.includes(operation)) known.operations.push(operation);
            } else {
              shapes.set(shape, { shape, statement, operations: [operation], exchange: query.exchange });
            }
          }
        }
      }
    });
  } finally {
    await cleanUp(load);
  }
  const byColumn = new Map<string, { seen: SeenShape; scan: FullScan; column: string; plan: string[] }>();
  const sorted = new Map<string, { seen: SeenShape; sort: FullSort; plan: string[] }>();
  const explained: Array<Record<string, unknown>> = [];
  for (const seen of shapes.values()) {
    const shape = analyzeStatement(seen.statement);
    const pages = shape.hasOrderBy && shape.hasLimit;
    if (
      shape.verb === "insert" ||
      shape.verb === "other" ||
      (shape.filters.length === 0 && shape.joins.length === 0 && !pages)
    )
      continue;
    const result = await explainStatement(handle, tables, seen.statement);
    explained.push({
      statement: seen.shape,
      plan: result.plan,
      ...(result.error ? { error: result.error } : {}),
    });
    // A page filtered on an unindexed column is that scan's finding; the sort is of the matches only.
    const filtered = result.scans.some((scan) => scan.filterColumns.length > 0);
    for (const sort of filtered ? [] : result.sorts) {
      const key = `${sort.table}.${sort.column}`;
      if (!sorted.has(key)) sorted.set(key, { seen, sort, plan: result.plan });
    }
    for (const scan of result.scans) {
      for (const column of scan.unindexedColumns) {
        const key = `${scan.table}.${column}`;
        if (!byColumn.has(key)) byColumn.set(key, { seen, scan, column, plan: result.plan });
        else
          byColumn
            .get(key)!
            .seen.operations.push(
              ...seen.operations.filter(
                (operation) => !byColumn.get(key)!.seen.operations.includes(operation),
              ),
            );
      }
    }
  }
  const candidates: EnvelopeDraft[] = [];
  for (const [key, found] of byColumn) {
    const rows = await readOnly(handle, (query) =>
      query(`SELECT COUNT(*) AS n FROM ${quoteName(found.scan.table)}`),
    );
    const rowCount = rows?.[0]?.n === undefined ? undefined : Number(rows[0].n);
    const [operation, ...others] = found.seen.operations;
    if (!operation) continue;
    const endpoint = operationKey(operation);
    candidates.push(
      loadFinding(load, {
        defectClass: "unindexed-query",
        operation,
        title: `${endpoint} scans all of ${found.scan.table} to filter on ${found.column}: no index`,
        summary: `Each ${endpoint} request runs \`${found.seen.shape}\`. The ${handle.kind === "sqlite" ? "SQLite" : "PostgreSQL"} plan is a full scan (${found.scan.detail}) because no index starts with ${key}${rowCount !== undefined ? ` (${rowCount} rows today)` : ""}. The cost grows with the table on every request. Fix: CREATE INDEX ON ${found.scan.table} (${found.column}).`,
        impact: `Every call reads the whole ${found.scan.table} table; latency grows with the data and the scans compete with every other query.`,
        severity: "medium",
        confidence: 0.85,
        discriminator: key,
        related: [
          { kind: "table", value: key },
          ...others.slice(0, 5).map((other) => ({ kind: "endpoint" as const, value: operationKey(other) })),
        ],
        exchanges: [{ label: "request", exchange: found.seen.exchange }],
        measurements: {
          operation: endpoint,
          statement: found.seen.statement,
          shape: found.seen.shape,
          plan: found.plan,
          scanned_table: found.scan.table,
          filter_columns: found.scan.filterColumns,
          unindexed_columns: found.scan.unindexedColumns,
          indexes: tables.find((table) => table.name === found.scan.table)?.indexes ?? [],
          rows: rowCount ?? null,
          also_run_by: others.map((other) => operationKey(other)),
        },
        steps: [
          `Send ${endpoint} (see the curl line) with the statement log on; it runs: ${found.seen.shape}`,
          `EXPLAIN ${handle.kind === "sqlite" ? "QUERY PLAN " : ""}that statement: ${found.scan.detail}`,
          `Expected: an index on ${key} (the plan then searches it instead of scanning).`,
        ],
      }),
    );
  }
  for (const [key, found] of sorted) {
    if (byColumn.has(key)) continue;
    const candidate = await sortFinding(load, handle, tables, key, found);
    if (candidate) candidates.push(candidate);
  }
  return {
    candidates,
    stats: {
      ...baseStats(load.run),
      operations: operations.length,
      requests_observed: observed,
      shapes: shapes.size,
      explained,
    },
  };
}

/** The statements behind one operation: as it is, and with its documented filters filled in. */
async function queriesOf(
  load: LoadRun,
  operation: Operation,
): Promise<Array<{ exchange: HttpExchange; window: string[] }>> {
  const reached = await reach(load, operation);
  if (!reached) return [];
  const found: Array<{ exchange: HttpExchange; window: string[] }> = [];
  const plain = await ownStatements(load, reached.user, clonePrepared(reached.prepared));
  if (plain) found.push(plain);
  const limit = limitParameter(operation);
  const filters = operation.parameters.filter(
    (parameter) =>
      parameter.in === "query" &&
      !parameter.required &&
      parameter.name !== limit &&
      !NOT_A_FILTER.test(parameter.name),
  );
  if (filters.length > 0) {
    const prepared = clonePrepared(reached.prepared);
    for (const parameter of filters) {
      const schema = asSchema(parameter.schema ?? { type: "string" });
      const value = parameter.example ?? validValue(schema, { seed: "qaas", name: parameter.name });
      prepared.query[parameter.name] = typeof value === "string" ? value : JSON.stringify(value);
    }
    const filtered = await ownStatements(load, reached.user, prepared);
    if (filtered) found.push(filtered);
  }
  return found;
}

/**
 * The statements a request runs, sent twice: only shapes seen both times are kept, so statements another
 * agent's traffic happened to add to one window are not blamed on this operation.
 */
async function ownStatements(
  load: LoadRun,
  user: string | undefined,
  prepared: ReturnType<typeof clonePrepared>,
): Promise<{ exchange: HttpExchange; window: string[] } | undefined> {
  const first = await sample(load, user, prepared);
  const second = await sample(load, user, clonePrepared(prepared));
  if (!first?.window || !second?.window) return undefined;
  const again = second.window.shapes;
  return {
    exchange: first.exchange,
    window: first.window.queries.filter((query) => again.has(normalizeStatement(query))),
  };
}

/** A sort this small costs little whatever the plan: only a table this large makes a whole-table sort a defect. */
const SORTED_ROWS = 1000;

/** A page ordered by a column no index starts with: the whole table is read and sorted for each request. */
async function sortFinding(
  load: LoadRun,
  handle: DatabaseHandle,
  tables: readonly Table[],
  key: string,
  found: { seen: SeenShape; sort: FullSort; plan: string[] },
): Promise<EnvelopeDraft | undefined> {
  const rows = await readOnly(handle, (query) =>
    query(`SELECT COUNT(*) AS n FROM ${quoteName(found.sort.table)}`),
  );
  const rowCount = Number(rows?.[0]?.n ?? 0);
  const [operation, ...others] = found.seen.operations;
  if (!operation || rowCount < SORTED_ROWS) {
    load.run.notes.push(`${key}: sorted without an index, but ${rowCount} rows: not reported`);
    return undefined;
  }
  const endpoint = operationKey(operation);
  const { table, column, detail } = found.sort;
  return loadFinding(load, {
    defectClass: "unindexed-query",
    operation,
    title: `${endpoint} sorts all of ${table} by ${column} for each page: no index`,
    summary: `Each ${endpoint} request runs \`${found.seen.shape}\`. To answer one page the database reads every row of ${table} (${rowCount} today) and sorts them (${detail}), because no index starts with ${key}. The cost grows with the table on every request. Fix: CREATE INDEX ON ${table} (${column}).`,
    impact: `Every call reads and sorts the whole ${table} table to return a few rows; latency grows with the data.`,
    severity: "medium",
    confidence: 0.85,
    discriminator: `${key} (order)`,
    related: [
      { kind: "table", value: key },
      ...others.slice(0, 5).map((other) => ({ kind: "endpoint" as const, value: operationKey(other) })),
    ],
    exchanges: [{ label: "request", exchange: found.seen.exchange }],
    measurements: {
      operation: endpoint,
      statement: found.seen.statement,
      shape: found.seen.shape,
      plan: found.plan,
      sorted_table: table,
      order_column: column,
      indexes: tables.find((entry) => entry.name === table)?.indexes ?? [],
      rows: rowCount,
    },
    steps: [
      `Send ${endpoint} (see the curl line) with the statement log on; it runs: ${found.seen.shape}`,
      `EXPLAIN ${handle.kind === "sqlite" ? "QUERY PLAN " : ""}that statement: ${detail}`,
      `Expected: an index on ${key} (the plan then reads the rows in order and stops after the page).`,
    ],
  });
}
