import { setTimeout } from "node:timers/promises";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { operationKey } from "../api/operation-index.ts";
import { pacingKey } from "../api/probe-support.ts";
import { clonePrepared } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { slowOperationsFor } from "../http/slow-operations.ts";
import { buildQuery, fillPath, joinUrl } from "../http/target-url.ts";
import { median } from "../median.ts";
import { baseStats, send, untilBudget } from "../session/probe-run.ts";
import { loadFinding } from "./load-findings.ts";
import type { LoadOutcome, LoadRun } from "./load-run.ts";
import { cleanUp, openLoadRun, reach, readOperations, sendUnpaced, unreachedReason } from "./load-run.ts";
import { slowWriteCandidates, timeSlowWrite } from "./write-timing.ts";

// time_endpoints: each read operation timed after one discarded warm-up request, as often as it takes to
// tell (once when clearly fast, not at all when the warm-up was already far over the budget, up to
// `samples` times when close to it); an operation whose median is over the profile's budget is timed
// again after pauses, and reported only when the confirmation agrees. Reads that aggregate go first,
// before the data grows.
// Medians, never maxima: a shared machine has noisy moments. Each timed request is sent in a measurement
// window, so the other agents running beside LOAD are never timed with it.

export interface TimingOptions {
  operation?: string;
  samples?: number;
  budget_ms?: number;
  max_operations?: number;
  max_requests?: number;
  /** How long one request may go unanswered (default: the run's, 10 s). */
  timeout_ms?: number;
  /** Time the writes the run saw answer slowly instead of the reads (see write-timing.ts). */
  writes?: boolean;
}

/** Requests that confirm a slow first round. */
const CONFIRMATIONS = 2;
/**
 * An answer this many times over the budget is slow beyond any noise: a warm-up that slow is the first
 * round, and one paced confirmation as slow settles the second. Each request to such a handler may hold
 * a single-threaded target for seconds, for every agent.
 */
const FAR_OVER = 4;
/** Successful answers other probes got, all under a quarter of the budget, that make a read clearly fast. */
const FAST_SEEN = 3;
/**
 * Reads that aggregate (reports, exports, statistics, search): timed first, while the data is still much
 * as the target was seeded, before other agents' writes grow what they aggregate over.
 */
const AGGREGATE =
  /(^|[/_.-])(reports?|forecasts?|stats|statistics|analytics|summar(y|ies)|exports?|dashboards?|metrics|aggregates?|insights|totals|overview|trends?|search)([/_.-]|$)/i;

export async function timeEndpoints(
  context: ToolContext,
  options: TimingOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> } | string> {
  const budget = options.budget_ms ?? context.target?.profile.budgets?.slow_endpoint_ms ?? 500;
  const samples = Math.min(Math.max(options.samples ?? 3, 2), 7);
  const load = await openLoadRun(context, "time_endpoints", options.max_requests ?? 350, options.timeout_ms);
  if (typeof load === "string") return load;
  if (options.writes) return timeWrites(load, options, budget);
  // Aggregates first, then the cap: a report listed late in a large map must not fall outside it.
  const operations = readOperations(context, options.operation)
    .sort((left, right) => Number(AGGREGATE.test(right.path)) - Number(AGGREGATE.test(left.path)))
    .slice(0, options.max_operations ?? 80);
  const candidates: EnvelopeDraft[] = [];
  const timings: Array<Record<string, unknown>> = [];
  try {
    await untilBudget(load.run, async () => {
      for (const operation of operations) {
        if (context.signal.aborted) break;
        const outcome = await timeOperation(load, operation, budget, samples);
        timings.push(outcome.summary);
        if (outcome.candidate) candidates.push(outcome.candidate);
      }
    });
  } finally {
    await cleanUp(load);
  }
  return { candidates, stats: { ...baseStats(load.run), budget_ms: budget, samples, operations: timings } };
}

async function timeWrites(
  load: LoadRun,
  options: TimingOptions,
  budget: number,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const candidates: EnvelopeDraft[] = [];
  const timings: Array<Record<string, unknown>> = [];
  if (!load.run.target.writesAllowed) load.run.notes.push("the target does not allow writes: none is timed");
  else
    try {
      const writes = slowWriteCandidates(load, budget, options.operation).slice(
        0,
        options.max_operations ?? 10,
      );
      await untilBudget(load.run, async () => {
        for (const { operation, seen } of writes) {
          if (load.run.context.signal.aborted) break;
          const outcome = await timeSlowWrite(load, operation, seen, budget);
          timings.push(outcome.summary);
          if (outcome.candidate) candidates.push(outcome.candidate);
        }
      });
    } finally {
      await cleanUp(load);
    }
  return { candidates, stats: { ...baseStats(load.run), budget_ms: budget, writes: timings } };
}

/** One timed request, alone on the target: another agent's request in flight would be timed with it. */
async function timedOnce(
  load: LoadRun,
  user: string | undefined,
  prepared: ReturnType<typeof clonePrepared>,
): Promise<HttpExchange | undefined> {
  const exchange = await load.run.client.quietly(() => sendUnpaced(load, user, clonePrepared(prepared)));
  return exchange && isSuccess(exchange) ? exchange : undefined;
}

/**
 * The first round, sampled adaptively: one timed request settles a clearly fast operation (under half the
 * budget), two settle a clearly slow one (both over twice the budget), and anything in between gets all
 * `samples`. Answers undefined when a timed request failed.
 */
async function firstRound(
  load: LoadRun,
  user: string | undefined,
  prepared: ReturnType<typeof clonePrepared>,
  budget: number,
  samples: number,
): Promise<HttpExchange[] | undefined> {
  const exchanges: HttpExchange[] = [];
  while (exchanges.length < samples) {
    const exchange = await timedOnce(load, user, prepared);
    if (!exchange) return undefined;
    exchanges.push(exchange);
    const times = exchanges.map((timed) => timed.durationMs);
    if (times.every((time) => time <= budget / 2)) break;
    if (times.length >= 2 && times.every((time) => time > budget * 2)) break;
  }
  return exchanges;
}

/**
 * The confirmation of a slow first round: a few more requests, each after a pause as long as the last one
 * took (at most a second), so a handler that holds the server does not hold it back to back.
 */
async function confirmationRound(
  load: LoadRun,
  user: string | undefined,
  prepared: ReturnType<typeof clonePrepared>,
  last: number,
  farOver: number | undefined,
): Promise<HttpExchange[]> {
  const exchanges: HttpExchange[] = [];
  let pause = last;
  for (let index = 0; index < CONFIRMATIONS; index += 1) {
    await setTimeout(Math.min(pause, 1000));
    const exchange = await timedOnce(load, user, prepared);
    if (!exchange) break;
    exchanges.push(exchange);
    pause = exchange.durationMs;
    if (farOver !== undefined && exchange.durationMs > farOver) break;
  }
  return exchanges;
}

async function timeOperation(
  load: LoadRun,
  operation: Operation,
  budget: number,
  samples: number,
): Promise<LoadOutcome> {
  const key = operationKey(operation);
  // Other probes of the run already got this read answered, quickly, several times — under the load of the
  // whole run: it is clearly fast, and timing it would only hold the target once more. Reads that
  // aggregate are always timed (the others' requests may have asked for less than a default request does).
  const pacing = slowOperationsFor(load.run.context);
  const answered = pacing.answeredOf(pacingKey(operation));
  if (
    !AGGREGATE.test(operation.path) &&
    answered.length >= FAST_SEEN &&
    answered.every((time) => time <= budget / 4)
  )
    return {
      summary: {
        operation: key,
        median_ms: median(answered),
        times_ms: answered,
        result: "answered other probes quickly: not timed again",
      },
    };
  // Answers far over the budget that other probes of the run saw are a first signal (and warmed the
  // handler): one request of this probe's own, timed alone and as slow, is the second. Each request to
  // such a handler may hold a single-threaded target for seconds.
  const earlier = pacing.slowAnswersOf(pacingKey(operation)).filter((ms) => ms > budget * FAR_OVER);
  // Otherwise reach() sends the warm-up request, which is not timed. Unpaced: the slow operations are the
  // point. The warm-up and the first round share one window (one wait for others' requests to drain), so
  // that others wait for a slow handler instead of piling up behind it.
  const confirmsEarlier = (exchange: HttpExchange) =>
    earlier.length > 0 && exchange.durationMs > budget * FAR_OVER;
  let firstEndedAt = 0;
  const { reached, first } = await load.run.client.quietly(async () => {
    const reached = await reach(load, operation, {}, undefined, { paced: false });
    if (!reached || confirmsEarlier(reached.exchange)) return { reached, first: undefined };
    // A warm-up far over the budget is no cold start: it is the first round, and the paced confirmation
    // the second (each request to such a handler may hold the target for seconds).
    const first =
      reached.exchange.durationMs > budget * FAR_OVER
        ? [reached.exchange]
        : await firstRound(load, reached.user, reached.prepared, budget, samples);
    firstEndedAt = pacing.now();
    return { reached, first };
  });
  if (reached && confirmsEarlier(reached.exchange))
    return slowEndpoint(load, operation, reached, budget, [[reached.exchange]], earlier);
  if (!reached) {
    if (!load.stalled.has(key)) return { summary: { operation: key, skipped: unreachedReason(load, key) } };
    // The handler may still be running: on a single-threaded server every request after it waits too, so
    // nothing is sent (and nothing else timed) until the server answers a trivial request again.
    if (!(await answersAgain(load)))
      return { summary: { operation: key, skipped: "the server stopped answering after it" } };
    const stalled = await stalledTwice(load, operation, budget);
    await answersAgain(load);
    return stalled ?? { summary: { operation: key, skipped: "no answer once, answered when sent again" } };
  }
  if (!first) return { summary: { operation: key, skipped: "not every timed request succeeded" } };
  const firstTimes = first.map((exchange) => exchange.durationMs);
  const firstMedian = median(firstTimes);
  if (firstMedian <= budget)
    return { summary: { operation: key, median_ms: firstMedian, times_ms: firstTimes } };
  // Far over the budget every time so far: one paced confirmation as slow is enough.
  const farOver = firstTimes.every((time) => time > budget * FAR_OVER) ? budget * FAR_OVER : undefined;
  if (farOver !== undefined) {
    // Other probes' requests sent since, each judged slow on its own, confirm it as well as a request of
    // this probe's: one more would hold the target for seconds again.
    await pacing.settled(pacingKey(operation));
    const later = pacing.culpritAnswersSince(pacingKey(operation), firstEndedAt).filter((ms) => ms > farOver);
    if (later.length > 0) return slowEndpoint(load, operation, reached, budget, [first], later, "later");
  }
  const second = await confirmationRound(load, reached.user, reached.prepared, firstTimes.at(-1)!, farOver);
  const secondTimes = second.map((exchange) => exchange.durationMs);
  const all = [...firstTimes, ...secondTimes];
  const overall = median(all);
  const over = all.filter((time) => time > budget).length;
  const summary = { operation: key, median_ms: overall, times_ms: all, budget_ms: budget };
  const confirmed =
    second.length >= CONFIRMATIONS || (farOver !== undefined && secondTimes.every((time) => time > farOver));
  if (
    !confirmed ||
    second.length === 0 ||
    median(secondTimes) <= budget ||
    over < Math.ceil(all.length * 0.66)
  ) {
    return { summary: { ...summary, result: "over budget once, not when timed again" } };
  }
  return slowEndpoint(load, operation, reached, budget, [first, second]);
}

/** The finding for a read timed over the budget: its rounds of timed requests (and what others saw). */
function slowEndpoint(
  load: LoadRun,
  operation: Operation,
  reached: { user: string | undefined; prepared: ReturnType<typeof clonePrepared> },
  budget: number,
  rounds: HttpExchange[][],
  others: number[] = [],
  /** Whether the other probes' answers came before this probe's requests or after them. */
  when: "earlier" | "later" = "earlier",
): LoadOutcome {
  const key = operationKey(operation);
  const timed = rounds.flat();
  const all = timed.map((exchange) => exchange.durationMs);
  const overall = median(all);
  const over = all.filter((time) => time > budget).length;
  const slowest = [...timed].sort((left, right) => right.durationMs - left.durationMs);
  const path = `${fillPath(operation.path, reached.prepared.pathValues)}${buildQuery(reached.prepared.query)}`;
  const how =
    others.length === 0
      ? `${key} was timed ${all.length} times in ${rounds.length} rounds (the second after pauses) after a discarded warm-up request`
      : when === "earlier"
        ? `${key} was timed ${all.length} time(s) on its own, after other probes of the run had seen it take ${others.join(", ")} ms`
        : `${key} was timed ${all.length} time(s) on its own, and the requests other probes of the run sent it next took ${others.join(", ")} ms, each slow on its own`;
  const candidate = loadFinding(load, {
    defectClass: "slow-endpoint",
    operation,
    title: `${key} takes ${Math.round(overall)} ms (median of ${all.length}), over the ${budget} ms budget`,
    summary: `${how}: median ${Math.round(overall)} ms, fastest ${Math.min(...all)} ms, slowest ${Math.max(...all)} ms; ${over} of ${all.length} over the profile's slow_endpoint_ms budget of ${budget} ms, with ordinary data and no other load from this probe.`,
    impact: `Every caller waits ${Math.round(overall)} ms or more; under load the delay compounds and ties up workers.`,
    severity: overall > budget * 4 ? "high" : "medium",
    confidence: overall > budget * 2 ? 0.85 : 0.8,
    exchanges: [
      { label: "median-ish", exchange: slowest[Math.floor(slowest.length / 2)]! },
      { label: "slowest", exchange: slowest[0]! },
    ],
    measurements: {
      operation: key,
      budget_ms: budget,
      times_ms: all,
      median_ms: overall,
      rounds: rounds.map((round) => round.map((exchange) => exchange.durationMs)),
      ...(others.length > 0 ? { [`${when}_slow_answers_ms`]: others } : {}),
    },
    repro: {
      title: `${key} answers within ${budget} ms`,
      steps: [
        // Warm once: repeated runs of the test would otherwise double the load a slow endpoint puts on the server.
        { name: "warm-up", as: reached.user, method: "GET", path, once: true },
        { name: "timed", as: reached.user, method: "GET", path },
      ],
      assertions: [
        {
          kind: "duration_below",
          step: "timed",
          ms: budget,
          message: `${key} must answer within ${budget} ms`,
        },
      ],
    },
  });
  const summary = { operation: key, median_ms: overall, times_ms: all, budget_ms: budget };
  return { summary: { ...summary, result: "slow-endpoint" }, candidate };
}

/**
 * A read that got no answer within the client's timeout, and either the run's pacing had already found it
 * slow (other probes' requests, earlier in the run) or it gets no answer once more in a row: slower than
 * any budget. Sent once more at most: a handler that runs that long may hold a single-threaded server the
 * whole time.
 */
async function stalledTwice(
  load: LoadRun,
  operation: Operation,
  budget: number,
): Promise<LoadOutcome | undefined> {
  const key = operationKey(operation);
  const first = load.stalled.get(key);
  if (!first) return undefined;
  const earlier = slowOperationsFor(load.run.context).slowAnswersOf(key);
  let again: HttpExchange | undefined;
  if (earlier.length === 0) {
    again = await load.run.client.quietly(() => sendUnpaced(load, first.user, clonePrepared(first.prepared)));
    if (again?.error !== "timeout") return undefined;
  }
  const waited = again ? [first.exchange.durationMs, again.durationMs] : [first.exchange.durationMs];
  const path = `${fillPath(operation.path, first.prepared.pathValues)}${buildQuery(first.prepared.query)}`;
  const candidate = loadFinding(load, {
    defectClass: "slow-endpoint",
    operation,
    title: again
      ? `${key} gives no answer within ${waitOf(Math.min(...waited))} (twice in a row)`
      : `${key} gives no answer within ${waitOf(waited[0]!)}, and took ${waitOf(Math.max(...earlier))} for other probes`,
    summary: again
      ? `${key} was sent twice in a row and neither request was answered before the client gave up after ${waited.join(" and ")} ms, far over the profile's slow_endpoint_ms budget of ${budget} ms.`
      : `${key} was not answered before the client gave up after ${waited[0]} ms; earlier in the run the requests other probes sent it took ${earlier.join(", ")} ms, so the run had already stopped sending it. Both far over the profile's slow_endpoint_ms budget of ${budget} ms.`,
    impact:
      "Callers wait until their own timeouts; while the handler runs, a single-threaded server answers no one else.",
    severity: "high",
    confidence: 0.8,
    exchanges: [
      { label: "no-answer", exchange: first.exchange },
      ...(again ? [{ label: "no-answer-again", exchange: again }] : []),
    ],
    measurements: {
      operation: key,
      budget_ms: budget,
      times_ms: waited,
      timed_out: true,
      ...(again ? {} : { earlier_slow_answers_ms: earlier }),
    },
    repro: {
      title: `${key} answers within ${budget} ms`,
      steps: [{ name: "timed", as: first.user, method: "GET", path }],
      assertions: [
        {
          kind: "duration_below",
          step: "timed",
          ms: budget,
          message: `${key} must answer within ${budget} ms`,
        },
      ],
    },
  });
  return { summary: { operation: key, times_ms: waited, result: "slow-endpoint (no answer)" }, candidate };
}

/**
 * Whether the server answers a trivial request (a path nobody serves: its 404 costs the router nothing)
 * promptly, asked again until it does or until a few timeouts' worth of waiting; any status counts.
 */
async function answersAgain(load: LoadRun): Promise<boolean> {
  const patience = load.run.client.timeoutMs;
  const prompt = Math.min(Math.max(patience / 2, 200), 2000);
  const giveUp = Date.now() + Math.max(30_000, patience * 3);
  while (Date.now() < giveUp) {
    const url = joinUrl(load.run.target.baseUrl, `/.well-known/qaas-ping-${uniqueSeed()}`);
    const ping = await send(load.run, undefined, { method: "GET", url, timeoutMs: prompt });
    // A request the run may not send cannot tell: nothing to wait for.
    if (!ping) return true;
    if (ping.response && !ping.error && ping.durationMs <= prompt) return true;
    // Refused connections answer at once: pause instead of asking again in a tight loop.
    if (ping.error !== "timeout") await setTimeout(prompt);
  }
  return false;
}

function waitOf(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
