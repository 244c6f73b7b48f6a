import { setTimeout } from "node:timers/promises";
import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation, isSafeWrite, operationKey, selectOperations } from "../api/operation-index.ts";
import { pacingKey } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest } from "../api/request-builder.ts";
import type { CreatedResource } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { stepsOnRecord } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { slowOperationsFor } from "../http/slow-operations.ts";
import { pathParameterNames } from "../http/target-url.ts";
import { median } from "../median.ts";
import { loadFinding } from "./load-findings.ts";
import type { LoadOutcome, LoadRun } from "./load-run.ts";
import { sendUnpaced } from "./load-run.ts";
import { addressFor } from "./own-writes.ts";

// Slow writes (time_endpoints with `writes`): a write is timed only where the run already saw it slow,
// since each timed request makes a record — this is never a sweep. A create, or an action on a record,
// qualifies when the last answers the run's other probes got from it (one is enough: the timing is the
// confirmation) have a median over the budget — a handler that sends mail, renders a document or calls a
// slow service inline. It is then sent twice more, each time alone on the target (a measurement window)
// after a pause, with fresh values, on a record of the probe's own where its path names one, and reported
// when both answers are over the budget too.
// Nothing the application had is written to; dangerous paths, sign-in and shared state are never sent.

const TIMED = 2;
const WRITE_METHODS = new Set(["POST", "PUT", "PATCH"]);

/** Writes the run may send whose answers to the other probes were slow, with what those answers took. */
export function slowWriteCandidates(
  load: LoadRun,
  budget: number,
  filter?: string,
): Array<{ operation: Operation; seen: number[] }> {
  const map = load.run.context.systemMap();
  if (!map) return [];
  const pacing = slowOperationsFor(load.run.context);
  return selectOperations(map, filter).flatMap((operation) => {
    if (!WRITE_METHODS.has(operation.method.toUpperCase()) || operation.graphql) return [];
    if (!isSafeWrite(operation) || isAuthOperation(operation) || operation.form?.csrf_field) return [];
    const seen = [...pacing.answeredOf(pacingKey(operation)), ...pacing.slowAnswersOf(pacingKey(operation))];
    return seen.length > 0 && median(seen) > budget ? [{ operation, seen }] : [];
  });
}

interface TimedWrite {
  user: string | undefined;
  prepared: PreparedRequest;
  resource?: CreatedResource;
  exchange: HttpExchange;
}

/** One write with fresh values, on a fresh record of the probe's own when the path names one, timed alone. */
async function timedWrite(load: LoadRun, operation: Operation): Promise<TimedWrite | string> {
  const onRecord = pathParameterNames(operation.path).length > 0;
  const address = await addressFor(load, operation, { update: onRecord });
  if (typeof address === "string") return address;
  if (address.caller.account) return "left alone: its path names an account, not a record";
  const user = address.caller.user;
  const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: address.values });
  const exchange = await load.run.client.quietly(() => sendUnpaced(load, user, prepared));
  if (!exchange || !isSuccess(exchange))
    return `answered ${exchange?.response?.status ?? exchange?.error ?? "nothing"} when timed`;
  return { user, prepared, exchange, ...(address.resource ? { resource: address.resource } : {}) };
}

export async function timeSlowWrite(
  load: LoadRun,
  operation: Operation,
  seen: readonly number[],
  budget: number,
): Promise<LoadOutcome> {
  const key = operationKey(operation);
  const timed: TimedWrite[] = [];
  for (let index = 0; index < TIMED; index += 1) {
    // Paced as the read confirmations are: a handler that holds the server does not get it back to back.
    await setTimeout(Math.min(timed.at(-1)?.exchange.durationMs ?? 0, 1000));
    const write = await timedWrite(load, operation);
    if (typeof write === "string") return { summary: { operation: key, seen_ms: seen, skipped: write } };
    timed.push(write);
  }
  const times = timed.map((write) => write.exchange.durationMs);
  const summary = { operation: key, seen_ms: seen, times_ms: times, budget_ms: budget };
  if (times.some((time) => time <= budget))
    return { summary: { ...summary, result: "slow for other probes, not when timed alone" } };
  const all = [...seen, ...times];
  const overall = median(times);
  const [first] = timed;
  const candidate = loadFinding(load, {
    defectClass: "slow-endpoint",
    operation,
    title: `${key} takes ${Math.round(overall)} ms (median of ${times.length} timed writes), over the ${budget} ms budget`,
    summary:
      `The run's other probes saw ${key} answer in ${seen.join(", ")} ms; sent ${times.length} more times alone on the target, ` +
      `each with fresh values${first!.resource ? " on a record of the probe's own" : ""}, it took ${times.join(" and ")} ms: ` +
      `every time over the profile's slow_endpoint_ms budget of ${budget} ms.`,
    impact: `Every caller waits ${Math.round(overall)} ms or more for this write; under load the delay compounds and ties up workers.`,
    severity: overall > budget * 4 ? "high" : "medium",
    confidence: overall > budget * 2 ? 0.85 : 0.8,
    exchanges: timed.map((write, index) => ({ label: `timed-${index + 1}`, exchange: write.exchange })),
    measurements: { operation: key, budget_ms: budget, times_ms: times, seen_ms: seen, all_ms: all },
    repro: {
      title: `${key} answers within ${budget} ms`,
      steps: stepsOnRecord("timed", first!.prepared, first!.user, first!.resource),
      assertions: [
        {
          kind: "duration_below",
          step: "timed",
          ms: budget,
          message: `${key} must answer within ${budget} ms`,
        },
      ],
    },
    // The test makes its own record and write each time: it holds on a fresh target.
    needsProbeData: false,
  });
  return { summary: { ...summary, result: "slow-endpoint" }, candidate };
}
