import type { Row } from "../../model/row.ts";
import { type Answer, brief, type OracleClient, type Verdict, verdict } from "../../oracles/oracle.ts";
import { sqlitePlan, sqliteRows } from "../../oracles/query-plan.ts";
import { statementsDuring } from "../../oracles/statement-log.ts";
import { nodeUserRoute, pyRoute } from "../code.ts";
import type { BuildContext, Built, Endpoint } from "../endpoint.ts";
import { guarded, INT, json, obj, STR } from "../schemas.ts";

// Sequential searches of a large table (CWE-1067): a lookup that filters the 4,000-row activity log on a
// column no index starts with, so every request reads the whole table; or a page of it ordered by such a
// column (newest by date, largest by amount), so every request reads and sorts the whole table to return
// twenty rows. The safe twins run the same lookup on an indexed column (code, sku), or order the page by
// the key or an indexed column. Only the SQLite servers carry these: a tool reads a plan from their
// database file, while the PostgreSQL servers keep their tables in a schema of a shared server that a
// profile has no way to name.

export interface UnindexedKnobs {
  /**
   * by-reference: one event by an identifier; by-category: the latest 20 of a city (or of a sku); newest:
   * the 20 newest by date (or by id); largest: the 20 largest by amount (or the first 20 by code).
   */
  lookup: "by-reference" | "by-category" | "newest" | "largest";
}

const LOOKUPS = {
  "by-reference": {
    vulnerable: { column: "reference", example: "REF-100042", words: "its reference" },
    safe: { column: "code", example: "C-42", words: "its code" },
    suffix: "lookup",
  },
  "by-category": {
    vulnerable: { column: "city", example: "Porto", words: "a city" },
    safe: { column: "sku", example: "SKU-103", words: "a sku" },
    suffix: "recent",
  },
} as const;

const PAGES = {
  newest: {
    vulnerable: { order: "created_at DESC", words: "the newest by date" },
    safe: { order: "id DESC", words: "the newest by id" },
    suffix: "newest",
  },
  largest: {
    vulnerable: { order: "amount DESC", words: "the largest by amount" },
    safe: { order: "code", words: "the first by code" },
    suffix: "ranked",
  },
} as const;

/** The first 20 events in an order: with no index for it, the whole table is read and sorted each time. */
function buildSortedPage(row: Row<UnindexedKnobs>, ctx: BuildContext, lookup: keyof typeof PAGES): Built {
  const vulnerable = row.label === "vulnerable";
  const page = PAGES[lookup];
  const chosen = vulnerable ? page.vulnerable : page.safe;
  const { place } = ctx;
  const path = `${place.base}/${page.suffix}`;
  const sql = `SELECT id, kind, reference, code, sku, city, amount FROM events ORDER BY ${chosen.order} LIMIT 20`;
  const summary = `${place.plural} events: ${chosen.words}`;
  const item = obj({ id: INT, kind: STR, reference: STR, code: STR, sku: STR, city: STR, amount: INT });
  const column = chosen.order.split(" ")[0]!;
  return {
    endpoint: {
      method: "GET",
      path,
      summary: `The 20 ${chosen.words.replace(/^the /, "")} ${place.plural} events`,
      access: "user",
      responses: {
        "200": json("a page of events", obj({ items: { type: "array", items: item, maxItems: 20 } })),
        ...guarded("user"),
      },
      node: nodeUserRoute("GET", path, `return { items: await db.all("${sql}", []) };`),
      python: pyRoute("GET", path, `require_user()\nreturn jsonify(items=db.all("${sql}", ()))`),
    },
    title: vulnerable
      ? `Unindexed query: ${summary} sorts all of events for each page (no index on ${column})`
      : `${summary}: orders events by ${column}`,
    ...(vulnerable
      ? {}
      : { why: `events is read in ${column} order from ${column === "id" ? "its key" : "an index"}` }),
    alone: true,
    oracle: (client) =>
      eventsPlanVerdict(client, () => client.ask({ as: "alice", path }), /USE TEMP B-TREE FOR ORDER BY/),
  };
}

export function buildUnindexedQuery(row: Row<UnindexedKnobs>, ctx: BuildContext): Built {
  if (ctx.server.database !== "sqlite") {
    throw new Error(`${row.id}: unindexed-query variants need a SQLite server (a readable plan)`);
  }
  if (row.knobs.lookup === "newest" || row.knobs.lookup === "largest")
    return buildSortedPage(row, ctx, row.knobs.lookup);
  const vulnerable = row.label === "vulnerable";
  const lookup = LOOKUPS[row.knobs.lookup];
  const filter = vulnerable ? lookup.vulnerable : lookup.safe;
  const { ph, place } = ctx;
  const path = `${place.base}/${lookup.suffix}`;
  const column = filter.column;
  const sql = `SELECT id, kind, reference, code, sku, city, amount FROM events WHERE ${column} = ${ph(1)} ORDER BY id DESC LIMIT 20`;
  const summary = `Latest ${place.plural} events by ${filter.words}`;
  const item = obj({ id: INT, kind: STR, reference: STR, code: STR, sku: STR, city: STR, amount: INT });
  const endpoint: Endpoint = {
    method: "GET",
    path,
    summary,
    access: "user",
    parameters: [
      {
        name: column,
        in: "query",
        required: false,
        schema: { ...STR, example: filter.example },
        description: `Events whose ${column} is this value (at most 20, newest first).`,
      },
    ],
    responses: {
      "200": json("the matching events", obj({ items: { type: "array", items: item, maxItems: 20 } })),
      ...guarded("user"),
    },
    node: nodeUserRoute(
      "GET",
      path,
      `const rows = await db.all("${sql}", [String(request.query[${JSON.stringify(column)}] ?? "")]);
return { items: rows };`,
    ),
    python: pyRoute(
      "GET",
      path,
      `require_user()
rows = db.all("${sql}", (request.args.get(${JSON.stringify(column)}, ""),))
return jsonify(items=rows)`,
    ),
  };
  return {
    endpoint,
    title: vulnerable
      ? `Unindexed query: ${summary.toLowerCase()} scans all of events (no index on ${column})`
      : `${summary}: filters events on ${column}`,
    ...(vulnerable ? {} : { why: `events has an index on ${column}: the plan searches it, never scans` }),
    alone: true,
    oracle: async (client) => {
      const ask = () => client.ask({ as: "alice", path, query: { [column]: filter.example } });
      await ask();
      return eventsPlanVerdict(client, ask, /^SCAN (TABLE )?events\b/);
    },
  };
}

/** The plan of the events statement one request runs: flawed when a line of it matches `flaw`. */
async function eventsPlanVerdict(
  client: OracleClient,
  ask: () => Promise<Answer>,
  flaw: RegExp,
): Promise<Verdict> {
  const { result, statements } = await statementsDuring(client, ask);
  if (result.status !== 200) throw new Error(`expected 200, got ${brief(result)}`);
  const statement = statements.find((line) => /\bFROM events\b/.test(line));
  if (!statement) throw new Error(`no statement on events logged (${statements.length} logged)`);
  const plan = sqlitePlan(client, statement);
  const rows = sqliteRows(client, "events");
  if (rows < 1000) throw new Error(`events holds ${rows} rows: too few to matter`);
  return verdict(
    plan.some((line) => flaw.test(line)),
    `${rows} rows; plan: ${plan.join(" / ")}`,
  );
}
