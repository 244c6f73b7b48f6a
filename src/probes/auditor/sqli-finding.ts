import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Severity } from "../../envelope/taxonomy.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { type InputPoint, pointPlace, pointTag } from "./input-points.ts";
import type { PointBaseline } from "./point-request.ts";
import type { SqliProof } from "./sqli-proof.ts";

const LOCATION_WORDS: Record<InputPoint["in"], string> = {
  query: "query parameter",
  path: "path parameter",
  body: "body field",
  header: "header",
  cookie: "cookie",
};

/** Whether the operation is the profile's sign-in request: injection there signs anyone in. */
export function isSignIn(run: ProbeRun, point: InputPoint): boolean {
  const endpoint = run.target.profile?.auth?.login.endpoint;
  if (!endpoint) return false;
  const [method, path] = endpoint.trim().split(/\s+/, 2);
  return (
    method?.toUpperCase() === point.operation.method.toUpperCase() &&
    (path ?? "").replace(/\/+$/, "") === point.operation.path.replace(/\/+$/, "")
  );
}

/**
 * Critical when the injection signs anyone in or widened a signed-in user's query to rows its filter hid
 * (other users' data); high otherwise.
 */
function severityOf(run: ProbeRun, baseline: PointBaseline, proof: SqliProof): Severity {
  if (isSignIn(run, baseline.point)) return "critical";
  if (proof.widened && baseline.user !== undefined && baseline.point.operation.security !== "public")
    return "critical";
  return "high";
}

export function sqlInjectionFinding(run: ProbeRun, baseline: PointBaseline, proof: SqliProof): EnvelopeDraft {
  const { point } = baseline;
  const key = operationKey(point.operation);
  const where = point.operation.graphql ? pointPlace(point) : `${LOCATION_WORDS[point.in]} ${point.name}`;
  const steps = [
    ...proof.evidence.map((shot) => stepFromPrepared(shot.label, shot.prepared, baseline.user)),
    stepFromPrepared("baseline", baseline.prepared, baseline.user),
  ];
  const signIn = isSignIn(run, point);
  return buildFinding(run, {
    domain: "security",
    defectClass: "injection",
    title: `SQL injection in ${pointPlace(point)} of ${key} (${proof.technique})`,
    summary:
      `${key}: the ${where} reaches the SQL text as ${proof.context}${proof.dbms ? ` (${proof.dbms})` : ""}: ` +
      `${proof.detail}.${point.page ? ` The input was found on page ${point.page}.` : ""}`,
    impact: signIn
      ? "Anyone can sign in without a password, and read or change any data the application's database user can reach."
      : "An attacker can read or change any data the application's database user can reach, other users' included.",
    location: endpointLocation(point.operation),
    related: point.page ? [{ kind: "page", value: point.page }] : undefined,
    severity: severityOf(run, baseline, proof),
    confidence: proof.technique === "time-based" ? 0.85 : 0.95,
    discriminator: pointTag(point),
    exchanges: [
      ...proof.evidence.flatMap((shot) =>
        shot.exchange ? [{ label: shot.label, exchange: shot.exchange }] : [],
      ),
      { label: "baseline", exchange: baseline.exchange },
    ],
    repro: {
      title: `${key} treats the ${where} as data, not SQL`,
      steps,
      assertions: proof.assertions,
    },
  });
}
