import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey, selectOperations } from "../api/operation-index.ts";
import { endpointLocation, isServerError, sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { ResourceFactory } from "../api/resource-factory.ts";
import type { ReproAssertion } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import type { InputPoint } from "./input-points.ts";
import { inputPoints } from "./input-points.ts";
import type { PointBaseline } from "./point-request.ts";
import { pointBaseline, withValue } from "./point-request.ts";
import { signature } from "./response-signature.ts";
import { hasSqlError, SQL_ERROR } from "./sql-signatures.ts";

export interface InjectionOptions {
  operation?: string;
  user?: string;
}

// Pairs that differ only in whether a condition holds. A server that treats the value as data answers both
// alike; one that pastes it into SQL answers differently. Distinct numbers keep token-matching searches
// from telling them apart for another reason.
const STRING_PAIRS: ReadonlyArray<[string, string]> = [
  ["' OR '7411'='7411", "' OR '7411'='7412"],
  ["' OR 7411=7411 -- ", "' OR 7411=7412 -- "],
  ["' AND '7411'='7411", "' AND '7411'='7412"],
];
const NUMERIC_PAIRS: ReadonlyArray<[string, string]> = [
  [" AND 7411=7411", " AND 7411=7412"],
  [" OR 7411=7411", " OR 7411=7412"],
];

/** Bounded sleeps (1 s) per database, with a zero-second control of the same shape. */
function timedPayloads(kind: string | undefined, numeric: boolean): Array<{ slow: string; control: string }> {
  const postgres = numeric
    ? {
        slow: " AND 7411=(SELECT 7411 FROM pg_sleep(1))",
        control: " AND 7411=(SELECT 7411 FROM pg_sleep(0))",
      }
    : { slow: "'||(SELECT '' FROM pg_sleep(1))||'", control: "'||(SELECT '' FROM pg_sleep(0))||'" };
  const mysql = numeric
    ? { slow: " AND SLEEP(1)=0", control: " AND SLEEP(0)=0" }
    : { slow: "' AND SLEEP(1)=0 AND '1'='1", control: "' AND SLEEP(0)=0 AND '1'='1" };
  if (kind === "sqlite") return [];
  if (kind === "postgres") return [postgres];
  return [postgres, mysql];
}

interface Confirmed {
  point: InputPoint;
  baseline: PointBaseline;
  technique: "error-based" | "boolean" | "time-based";
  evidence: Array<{ label: string; exchange: HttpExchange; prepared: PreparedRequest }>;
  detail: string;
  assertions: ReproAssertion[];
}

/**
 * probe_injection: SQL injection on every string (and numeric) input — query, path and body fields of
 * operations, and fields of crawled forms and links. Error-based (a quote produces a database error that a
 * doubled quote does not), boolean differential (true/false pairs answer differently, twice, while the
 * baseline is stable), and only when those are inconclusive but a quote visibly changes the answer,
 * time-based with a bounded 1-second delay against a zero-second control.
 */
export async function probeInjection(
  run: ProbeRun,
  options: InjectionOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const confirmed: Confirmed[] = [];
  const stats = { points: 0, tested: 0, unstable: 0, timed: 0, skipped: 0 };
  const factory = new ResourceFactory(run);
  const operations = options.operation ? new Set(selectOperations(run.map, options.operation)) : undefined;
  const points = inputPoints(run.map, { includeWrites: run.target.writesAllowed, operations });
  stats.points = points.length;
  const exhausted = await untilBudget(run, async () => {
    const users = (await usableUsers(run)).filter((user) => !options.user || user.name === options.user);
    await mapConcurrent(points, 6, async (point) => {
      const baseline = await pointBaseline(run, factory, point, users);
      if (
        !baseline ||
        isServerError(baseline.exchange) ||
        hasSqlError(baseline.exchange.response?.body ?? "")
      ) {
        stats.skipped += 1;
        return;
      }
      stats.tested += 1;
      const result = await testPoint(run, baseline, stats);
      if (result) confirmed.push(result);
    });
  });
  const candidates = confirmed.map((finding) => findingOf(run, finding));
  return { candidates, stats: { ...stats, confirmed: candidates.length, budget_exhausted: exhausted } };
}

async function sendValue(
  run: ProbeRun,
  baseline: PointBaseline,
  value: string,
): Promise<{ prepared: PreparedRequest; exchange: HttpExchange | undefined }> {
  const prepared = withValue(baseline.prepared, baseline.point, value);
  return { prepared, exchange: await sendPrepared(run, baseline.user, prepared) };
}

async function testPoint(
  run: ProbeRun,
  baseline: PointBaseline,
  stats: { unstable: number; timed: number },
): Promise<Confirmed | undefined> {
  const { point, value } = baseline;
  const strip = (payload: string, prepared?: PreparedRequest) => [
    value + payload,
    payload,
    prepared?.seed,
    baseline.prepared.seed,
  ];
  // Error-based: a lone quote breaks the SQL text, a doubled one does not.
  let quoteChanged = false;
  for (const quote of point.numeric ? ["'"] : ["'", '"']) {
    const broken = await sendValue(run, baseline, `${value}${quote}`);
    const balanced = await sendValue(run, baseline, `${value}${quote}${quote}`);
    if (!broken.exchange || !balanced.exchange) continue;
    const brokenText = broken.exchange.response?.body ?? "";
    if (
      signature(broken.exchange, strip(quote, broken.prepared)) !==
      signature(balanced.exchange, strip(quote + quote, balanced.prepared))
    )
      quoteChanged = true;
    if (hasSqlError(brokenText) && !hasSqlError(balanced.exchange.response?.body ?? "")) {
      return {
        point,
        baseline,
        technique: "error-based",
        evidence: [
          { label: "quote", exchange: broken.exchange, prepared: broken.prepared },
          { label: "doubled-quote", exchange: balanced.exchange, prepared: balanced.prepared },
        ],
        detail: `a ${quote === "'" ? "single" : "double"} quote in ${point.in} ${point.name} produced a database error (${brokenText.match(SQL_ERROR)?.[0]}) that the doubled quote does not`,
        assertions: [
          {
            kind: "body_not_matches",
            step: "quote",
            pattern: SQL_ERROR.source,
            flags: "i",
            message: "input must never reach the SQL text (database error in the answer)",
          },
          {
            kind: "status_below",
            step: "quote",
            value: 500,
            message: "a quote in the input must not break the query",
          },
        ],
      };
    }
  }
  // Boolean differential, on a stable baseline.
  const again = await sendValue(run, baseline, value);
  const stable =
    signature(baseline.exchange, [value, baseline.prepared.seed]) ===
    signature(again.exchange, [value, again.prepared.seed]);
  if (!stable) stats.unstable += 1;
  if (stable) {
    for (const [truePayload, falsePayload] of point.numeric ? NUMERIC_PAIRS : STRING_PAIRS) {
      const yes = await sendValue(run, baseline, value + truePayload);
      const no = await sendValue(run, baseline, value + falsePayload);
      if (!yes.exchange || !no.exchange) continue;
      if (
        signature(yes.exchange, strip(truePayload, yes.prepared)) ===
        signature(no.exchange, strip(falsePayload, no.prepared))
      )
        continue;
      const yesAgain = await sendValue(run, baseline, value + truePayload);
      const noAgain = await sendValue(run, baseline, value + falsePayload);
      if (
        signature(yesAgain.exchange, strip(truePayload, yesAgain.prepared)) !==
        signature(yes.exchange, strip(truePayload, yes.prepared))
      )
        continue;
      if (
        signature(noAgain.exchange, strip(falsePayload, noAgain.prepared)) !==
        signature(no.exchange, strip(falsePayload, no.prepared))
      )
        continue;
      return {
        point,
        baseline,
        technique: "boolean",
        evidence: [
          { label: "condition-true", exchange: yes.exchange, prepared: yes.prepared },
          { label: "condition-false", exchange: no.exchange, prepared: no.prepared },
        ],
        detail: `appending ${JSON.stringify(truePayload)} and ${JSON.stringify(falsePayload)} to ${point.in} ${point.name} gives different answers (${yes.exchange.response?.status} vs ${no.exchange.response?.status}, ${yes.exchange.response?.body.length ?? 0} vs ${no.exchange.response?.body.length ?? 0} bytes), repeatably, on a stable baseline`,
        assertions: [
          {
            kind: "same_response",
            steps: ["condition-true", "condition-false"],
            strip: [value + truePayload, value + falsePayload],
            message: "the value must be treated as data: a true and a false SQL condition must answer alike",
          },
        ],
      };
    }
  }
  // Time-based, only when the quote visibly changed something the other techniques could not explain.
  if (!quoteChanged) return undefined;
  const baselineMs = Math.max(baseline.exchange.durationMs, again.exchange?.durationMs ?? 0);
  for (const { slow, control } of timedPayloads(run.map.database?.kind, point.numeric)) {
    stats.timed += 1;
    const first = await sendValue(run, baseline, value + slow);
    if (!first.exchange || first.exchange.durationMs < baselineMs + 900) continue;
    const quick = await sendValue(run, baseline, value + control);
    if (!quick.exchange || quick.exchange.durationMs >= baselineMs + 400) continue;
    const second = await sendValue(run, baseline, value + slow);
    if (!second.exchange || second.exchange.durationMs < baselineMs + 900) continue;
    return {
      point,
      baseline,
      technique: "time-based",
      evidence: [
        { label: "sleep-1s", exchange: first.exchange, prepared: first.prepared },
        { label: "sleep-0s", exchange: quick.exchange, prepared: quick.prepared },
        { label: "sleep-1s-again", exchange: second.exchange, prepared: second.prepared },
      ],
      detail: `a 1-second SQL sleep in ${point.in} ${point.name} delayed the answer by ${first.exchange.durationMs - baselineMs} ms (twice) while a 0-second one did not`,
      assertions: [
        {
          kind: "duration_below",
          step: "sleep-1s",
          ms: baselineMs + 800,
          message: "an SQL sleep in the input must not delay the answer",
        },
      ],
    };
  }
  return undefined;
}

function findingOf(run: ProbeRun, finding: Confirmed): EnvelopeDraft {
  const { point, baseline } = finding;
  const key = operationKey(point.operation);
  const steps = finding.evidence.map((item) => stepFromPrepared(item.label, item.prepared, baseline.user));
  return buildFinding(run, {
    domain: "security",
    defectClass: "injection",
    title: `SQL injection in ${point.in} ${point.name} of ${key} (${finding.technique})`,
    summary: `${key}: ${finding.detail}.${point.page ? ` The input was found on page ${point.page}.` : ""}`,
    impact: "An attacker can read or change any data the application's database user can reach.",
    location: endpointLocation(point.operation),
    related: point.page ? [{ kind: "page", value: point.page }] : undefined,
    severity: severityFor("injection"),
    confidence: finding.technique === "time-based" ? 0.85 : 0.95,
    discriminator: `${point.in}:${point.name}`,
    exchanges: [
      ...finding.evidence.map(({ label, exchange }) => ({ label, exchange })),
      { label: "baseline", exchange: baseline.exchange },
    ],
    repro: {
      title: `${key} treats ${point.in} ${point.name} as data, not SQL`,
      steps,
      assertions: finding.assertions,
    },
  });
}
