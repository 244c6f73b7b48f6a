import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationIdentity, selectOperations } from "../api/operation-index.ts";
import { isServerError } from "../api/probe-support.ts";
import { ResourceFactory } from "../api/resource-factory.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { inputPoints } from "./input-points.ts";
import { pointBaseline } from "./point-request.ts";
import { hasSqlError } from "./sql-signatures.ts";
import { sqlInjectionFinding } from "./sqli-finding.ts";
import { testSqlPoint } from "./sqli-point.ts";
import { redirectLeakFinding } from "./sqli-redirect-leak.ts";

// Values to start from when the point's own value draws an error: a number (`ORDER BY 1`, `IN (1)`), a
// word, and `id`, a column nearly every table has, for a value placed as a (quoted) column name.
const NUMERIC_FALLBACKS = ["1", "0"];
const TEXT_FALLBACKS = ["1", "qaas", "id"];

export interface InjectionOptions {
  operation?: string;
  user?: string;
}

/**
 * probe_injection: SQL injection at every input point of the map (query, path, header, cookie, JSON, form
 * and multipart body fields, GraphQL variables; operations of any provenance and crawled forms and links),
 * in string, numeric, LIKE, parenthesised, IN-list, sort-key and LIMIT contexts. Techniques, each confirmed
 * by a second, independent signal: error-based (the database's syntax error shown), blind through
 * syntax-equivalent rewrites (`v'||'`, `2-1`, a second sort key) against their broken twins, boolean
 * differentials, and bounded 1-second sleeps where the database has one. See sqli-point.ts for the order.
 */
export async function probeInjection(
  run: ProbeRun,
  options: InjectionOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const candidates: EnvelopeDraft[] = [];
  const stats = {
    points: 0,
    tested: 0,
    skipped: 0,
    unstable: 0,
    timed: 0,
    probe_requests: 0,
    max_requests_per_point: 0,
    by_location: {} as Record<string, number>,
    by_technique: {} as Record<string, number>,
  };
  const factory = new ResourceFactory(run);
  const operations = options.operation ? new Set(selectOperations(run.map, options.operation)) : undefined;
  const points = inputPoints(run.map, {
    includeWrites: run.target.writesAllowed,
    operations,
    reserved: credentialNames(run),
  });
  stats.points = points.length;
  for (const point of points) stats.by_location[point.in] = (stats.by_location[point.in] ?? 0) + 1;
  // One confirmed point is enough for an operation: its other points are not worth the requests.
  const confirmed = new Set<string>();
  // Operations whose redirects already showed a database error: one finding each.
  const leaked = new Set<string>();
  const exhausted = await untilBudget(run, async () => {
    const users = (await usableUsers(run)).filter((user) => !options.user || user.name === options.user);
    await mapConcurrent(points, 6, async (point) => {
      if (confirmed.has(operationIdentity(point.operation))) return;
      const baseline = await pointBaseline(run, factory, point, users, {
        fallbacks: point.numeric ? NUMERIC_FALLBACKS : TEXT_FALLBACKS,
        rejects: (exchange) => isServerError(exchange) || hasSqlError(exchange.response?.body ?? ""),
      });
      if (
        !baseline ||
        isServerError(baseline.exchange) ||
        hasSqlError(baseline.exchange.response?.body ?? "")
      ) {
        stats.skipped += 1;
        return;
      }
      stats.tested += 1;
      const { proof, baseline: compared, requests, redirectLeak } = await testSqlPoint(run, baseline, stats);
      stats.probe_requests += requests;
      if (redirectLeak && !leaked.has(operationIdentity(point.operation))) {
        leaked.add(operationIdentity(point.operation));
        const leak = await redirectLeakFinding(run, baseline, redirectLeak);
        if (leak) candidates.push(leak);
      }
      stats.max_requests_per_point = Math.max(stats.max_requests_per_point, requests);
      if (!proof || confirmed.has(operationIdentity(point.operation))) return;
      confirmed.add(operationIdentity(point.operation));
      stats.by_technique[proof.technique] = (stats.by_technique[proof.technique] ?? 0) + 1;
      candidates.push(sqlInjectionFinding(run, compared, proof));
    });
  });
  return {
    candidates,
    stats: {
      ...stats,
      mean_requests_per_point:
        stats.tested > 0 ? Math.round((stats.probe_requests / stats.tested) * 10) / 10 : 0,
      confirmed: candidates.length,
      budget_exhausted: exhausted,
    },
  };
}

/** The header and cookie that carry the session: tampering with them tests the sign-in, not a handler. */
function credentialNames(run: ProbeRun): string[] {
  const login = run.target.profile?.auth?.login;
  const names: string[] = [];
  for (const spec of [login?.apply_as, login?.token_from]) {
    const [kind, name] = (spec ?? "").split(":", 2);
    if ((kind === "header" || kind === "cookie") && name) names.push(name);
  }
  return names;
}
