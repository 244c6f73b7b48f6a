import { randomInt } from "node:crypto";
import type { Operation } from "../../map/system-map.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { PointBaseline } from "./point-request.ts";
import type { Dbms } from "./sql-signatures.ts";
import { booleanProof } from "./sqli-boolean.ts";
import { errorBased } from "./sqli-error-based.ts";
import type { QuoteChar, TimedContext } from "./sqli-payloads.ts";
import { NUMERIC_PAIRS, stringPairs } from "./sqli-payloads.ts";
import type { SqliProof } from "./sqli-proof.ts";
import { numericRewriteProof, orderByProof, stringRewriteProof } from "./sqli-rewrites.ts";
import type { Shot } from "./sqli-shots.ts";
import { PointShots } from "./sqli-shots.ts";
import { timeBasedProof } from "./sqli-time-based.ts";

// The order one input point is tested in, cheapest and surest first, so a point that shows nothing costs a
// handful of requests: the two quotes (error-based straight away when the database error shows), the
// baseline again (is the answer stable at all?), then only the techniques the quotes made worth trying.

export interface PointTestStats {
  unstable: number;
  timed: number;
}

export interface PointResult {
  proof: SqliProof | undefined;
  /** The baseline the proof compares with (a numeric one when the point's own value showed nothing). */
  baseline: PointBaseline;
  requests: number;
  /** A shot answered by a redirect that carried a database error in its Location. */
  redirectLeak?: Shot;
}

const QUOTES: readonly QuoteChar[] = ["'", '"'];
const REFUSED: readonly number[] = [400, 422];

export async function testSqlPoint(
  run: ProbeRun,
  baseline: PointBaseline,
  stats: PointTestStats,
): Promise<PointResult> {
  const shots = new PointShots(run, baseline);
  const proof = await findProof(run, shots, stats);
  const redirectLeak = shots.redirectLeak;
  const numeric = /^\d+$/.test(baseline.value);
  if (!proof && shots.baselineMoved && !numeric && !QUIET_WORD.test(baseline.value)) {
    // A word the run's own records carry (a search matching what other probes keep creating) answers
    // differently each time: from a word nothing holds, the answer stays put and a widening pair shows.
    const retested = await retestFrom(run, shots, quietWord(), stats, { mustDiffer: false });
    if (retested) return { ...retested, redirectLeak: redirectLeak ?? retested.redirectLeak };
  }
  if (proof || numeric || shots.quoteChanged) {
    return { proof, baseline, requests: shots.requests, redirectLeak };
  }
  // A word that changed nothing may sit where SQL expects a number (`id = qaas` fails, and a swallowed error
  // looks like "no match"): when a number answers differently, the point is tested again from that number.
  const retested = await retestFrom(run, shots, "1", stats, { mustDiffer: true });
  return retested
    ? { ...retested, redirectLeak: redirectLeak ?? retested.redirectLeak }
    : { proof: undefined, baseline, requests: shots.requests, redirectLeak };
}

/**
 * A word no record holds: not the run's own (built around "qaas"), and fresh each time, since the probes
 * that write store the words they test with.
 */
function quietWord(): string {
  return `xyzzy${randomInt(10_000, 99_999)}`;
}
const QUIET_WORD = /^xyzzy\d{5}$/;

/**
 * The point tested again from `value` in place of its own; undefined when that value draws no usable
 * answer, or (`mustDiffer`) the baseline's own answer, which would tell nothing new.
 */
async function retestFrom(
  run: ProbeRun,
  shots: PointShots,
  value: string,
  stats: PointTestStats,
  options: { mustDiffer: boolean },
): Promise<PointResult | undefined> {
  const sent = await shots.send(value === "1" ? "number" : "quiet-word", value, { replace: true });
  if (!sent.exchange || shots.failed(sent)) return undefined;
  if (options.mustDiffer && shots.same(sent, shots.baselineShot)) return undefined;
  const baseline: PointBaseline = {
    ...shots.baseline,
    prepared: sent.prepared,
    exchange: sent.exchange,
    value,
  };
  const twin = new PointShots(run, baseline);
  const proof = await findProof(run, twin, stats);
  return { proof, baseline, requests: shots.requests + twin.requests, redirectLeak: twin.redirectLeak };
}

async function findProof(
  run: ProbeRun,
  shots: PointShots,
  stats: PointTestStats,
): Promise<SqliProof | undefined> {
  const base = shots.baselineShot;
  const numeric = /^\d{1,9}$/.test(shots.value);
  const operation = shots.baseline.point.operation;
  const widen = mayWiden(operation);

  const broken = new Map<QuoteChar, Shot>();
  let dbms: Dbms | undefined = run.map.database?.kind ?? run.target.profile?.database?.kind;
  for (const quote of QUOTES) {
    const shot = await shots.send(quote === "'" ? "quote" : "double-quote", quote);
    broken.set(quote, shot);
    const proof = await errorBased(shots, shot, quote);
    if (proof) return proof;
    dbms ??= shots.sqlError(shot)?.dbms;
  }
  const rejection = await validationRejection(shots, broken);
  const changed = (quote: QuoteChar) =>
    !shots.same(broken.get(quote)!, base) && !(rejection && shots.same(broken.get(quote)!, rejection));
  const anyChange = QUOTES.some(changed);
  shots.quoteChanged = anyChange;

  const again = await shots.send("baseline-again", "");
  shots.noteOrdinaryAnswer(again);
  if (!shots.same(again, base)) {
    shots.baselineMoved = true;
    stats.unstable += 1;
    return timeBased(shots, dbms, numeric, anyChange, stats);
  }

  // A baseline the application refused as invalid (400, 422) never reached a query: how its validation
  // message varies with the input says nothing about SQL, so only the database's own signals count there.
  if (REFUSED.includes(shots.status(base))) return timeBased(shots, dbms, numeric, anyChange, stats);

  if (numeric) {
    const proof = await numericRewriteProof(shots);
    if (proof) return proof;
  }
  for (const quote of QUOTES.filter(changed)) {
    const proof = await stringRewriteProof(shots, quote, dbms);
    if (proof) return proof;
  }
  // A sort key comes from a listing, a read: in a form that writes, `,9999` differs from `,1` for reasons
  // of its own validation (a date, a phone number), so the second-sort-key rewrite is kept to reads.
  if ((changed("'") || changed('"')) && isRead(operation)) {
    const proof = await orderByProof(shots);
    if (proof) return proof;
  }
  for (const quote of QUOTES) {
    // A condition that narrows (AND) only shows where the quote already changed the answer; one that widens
    // (OR) also finds a filter whose baseline is empty and whose errors are swallowed.
    const pairs = stringPairs(quote).filter((pair) =>
      changed(quote) ? true : quote === "'" && pair.name === "' OR",
    );
    const proof = await booleanProof(shots, pairs, `string (${quote})`, { widen });
    if (proof) return proof;
  }
  if (numeric) {
    const pairs = NUMERIC_PAIRS.filter((pair) => pair.widens || changed("'"));
    const proof = await booleanProof(shots, pairs, "numeric", { widen });
    if (proof) return proof;
  }
  // A sleep needs no visible change at all: it also finds a point whose errors are swallowed and whose
  // baseline matches nothing, where every other technique sees the same empty answer.
  return timeBased(shots, dbms, numeric, anyChange, stats);
}

// A path segment or field named like an action: a GET that buys, marks or deletes writes after all.
const ACTION =
  /(^|[/_-])(delete|remove|destroy|drop|purge|reset|wipe|clear|update|edit|set|save|mark|toggle|buy|purchase|pay|checkout|transfer|approve|publish|submit|send|import|sync|run|exec|execute|trigger|cancel|revoke|ban|enable|disable|activate|deactivate|assign|grant|logout|signout)([/_.-]|$)/i;

function isRead(operation: Operation): boolean {
  if (operation.graphql) return operation.graphql.kind === "query";
  return ["GET", "HEAD"].includes(operation.method.toUpperCase());
}

// The last fixed segment of a POST that reads: a search with a body too rich for a query string
// (`POST /orders/search`, Elasticsearch's `_search`), not a form that saves something.
const READ_ENDPOINT =
  /(^|[/_-])(search|searches|query|queries|filter|filters|find|lookup|list|browse|autocomplete|suggest|typeahead)$/i;

/**
 * OR widens a query to every row: harmless in a read, not in an UPDATE, so only where nothing is written —
 * a GET (or GraphQL query) not named like an action, or a POST whose path ends in a read such as `search`.
 */
export function mayWiden(operation: Operation): boolean {
  if (operation.graphql)
    return operation.graphql.kind === "query" && !namedLikeAction(operation.graphql.field);
  if (namedLikeAction(operation.path)) return false;
  const method = operation.method.toUpperCase();
  if (method === "GET" || method === "HEAD") return true;
  const fixed = operation.path.replace(/\/+$/, "").replace(/\/\{[^}]*\}$/, "");
  return method === "POST" && READ_ENDPOINT.test(fixed);
}

/** Whether a path or field name (`/orders/cancel`, `markPaid`) names an action, so a GET of it may write. */
export function namedLikeAction(name: string): boolean {
  return ACTION.test(name.replace(/([a-z0-9])([A-Z])/g, "$1_$2"));
}

/**
 * The answer a validator gives any malformed value: when a quote draws a 4xx, a value malformed without any
 * quote (`1zq` for a number) is sent too; the same answer means the quote was refused as input, before SQL.
 */
async function validationRejection(
  shots: PointShots,
  broken: ReadonlyMap<QuoteChar, Shot>,
): Promise<Shot | undefined> {
  const refused = [...broken.values()].find((shot) => {
    const status = shots.status(shot);
    return status >= 400 && status < 500 && !shots.same(shot, shots.baselineShot);
  });
  if (!refused) return undefined;
  const malformed = await shots.send("malformed", "zq");
  return shots.same(malformed, refused) ? malformed : undefined;
}

async function timeBased(
  shots: PointShots,
  dbms: Dbms | undefined,
  numeric: boolean,
  quoteChanged: boolean,
  stats: PointTestStats,
): Promise<SqliProof | undefined> {
  // Where no quote changed anything only the commonest contexts are timed: one request each when the
  // database is known, and no delay at all where the value is data.
  const contexts: Array<[TimedContext, QuoteChar]> = numeric
    ? [
        ["numeric", "'"],
        ["string", "'"],
      ]
    : quoteChanged
      ? [
          ["string", "'"],
          ["order-by", "'"],
        ]
      : [["string", "'"]];
  for (const [context, quote] of contexts) {
    const proof = await timeBasedProof(shots, dbms, context, quote, stats);
    if (proof) return proof;
  }
  return undefined;
}
