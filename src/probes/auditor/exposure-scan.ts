import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { operationKey, selectOperations } from "../api/operation-index.ts";
import { endpointLocation } from "../api/probe-support.ts";
import { ResourceFactory } from "../api/resource-factory.ts";
import { dottedPath, type ReproAssertion } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { byPrivilege, isAdminLike } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { isAdminMarked } from "./admin-marked.ts";
import { disclosuresIn } from "./exposure-errors.ts";
import type { CallerFacts, ExposureCandidate } from "./exposure-judge.ts";
import { isSelfOperation, judgeObserved } from "./exposure-judge.ts";
import type { Observed } from "./exposure-observe.ts";
import { describeObserved, observeOperations, repeat } from "./exposure-observe.ts";
import { observeHigherRoles } from "./exposure-roles.ts";
import { emailsIn } from "./sensitive-patterns.ts";

export interface ExposureOptions {
  operation?: string;
  user?: string;
}

/** Debug-shaped routes are check_misconfiguration's; scanning them here would report one leak twice. */
export const DEBUG_SEGMENT =
  /^(debug|_debug|__debug__|env|environment|config|configuration|actuator|metrics|phpinfo(\.php)?|server-status|server-info|_profiler|heapdump|threaddump|trace|vars|expvar|diagnostics|console|\.env.*|\.git|\.svn|\.hg)$/i;

/** What an answer to a higher role is judged for: credentials, never the people its work is about. */
const ELEVATED_KINDS = new Set(["password-hash", "credential"]);
/** Operations whose error disclosures are reported one by one before the rest are folded into one. */
const DISCLOSURES_PER_SIGNATURE = 6;
/** Requests kept back from observing for replaying error disclosures (their second signal). */
const CONFIRMATION_RESERVE = 40;

/**
 * scan_exposure: reads every GET (as the least privileged user, and anonymously where the document says
 * public; item reads also at ids of other users the caller saw in its own answers) and sends each operation
 * harmless malformed inputs (a wrong-typed query value, a malformed and an unknown id, a cut-short JSON
 * body), then looks in what comes back for password hashes of every common format, secrets, private fields
 * the documented answer does not declare, environment values, and stack traces, debug pages or SQL in errors.
 */
export async function scanExposure(
  run: ProbeRun,
  options: ExposureOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const found: ExposureCandidate[] = [];
  const stats = { reads: 0, errors_provoked: 0, confirmations: 0 };
  const factory = new ResourceFactory(run);
  // Debug routes are read too, but only passwords in them are judged here: their environment values and
  // configuration secrets are check_misconfiguration's, and a password list is a leak wherever it is served.
  const operations = selectOperations(run.map, options.operation);
  const observations: Observed[] = [];
  let callers: ProfileUser[] = [];
  let lowest: string | undefined;
  const exhausted = await untilBudget(run, async () => {
    const usable = byPrivilege(await usableUsers(run));
    const users = usable.filter((user) => !options.user || user.name === options.user);
    const caller = users[0];
    callers = usable;
    lowest = caller?.name;
    await observeOperations(
      run,
      operations,
      factory,
      caller?.name,
      stats,
      observations,
      CONFIRMATION_RESERVE,
    );
    if (!options.user)
      await observeHigherRoles(
        run,
        factory,
        operations,
        usable,
        caller,
        observations,
        stats,
        CONFIRMATION_RESERVE,
      );
  });
  // What was seen before the budget ran out is judged all the same, each answer for the user who got it;
  // confirmations use the reserve.
  // Anonymous reads are judged with the least privileged user's facts, as that user's own credentials.
  const factsOf = new Map<string | undefined, CallerFacts>();
  for (const observed of observations) {
    const who = observed.user ?? lowest;
    let facts = factsOf.get(who);
    if (!facts) {
      const caller = callers.find((user) => user.name === who);
      facts = callerFacts(run, observations, who, caller ? isAdminLike(caller.role) : false);
      factsOf.set(who, facts);
    }
    found.push(
      ...judgeObserved(observed, facts).filter((candidate) =>
        observed.elevated
          ? ELEVATED_KINDS.has(candidate.discriminator)
          : candidate.discriminator === "password-hash" || !isDebugRoute(observed),
      ),
    );
  }
  const confirmed = await confirmDisclosures(run, found, stats);
  found.splice(0, found.length, ...confirmed);
  return {
    candidates: choose(run, found),
    stats: { ...stats, exposures: found.length, budget_exhausted: exhausted },
  };
}

function isDebugRoute(observed: Observed): boolean {
  return toTemplateForm(observed.operation.path)
    .split("/")
    .some((segment) => DEBUG_SEGMENT.test(segment));
}

function callerFacts(
  run: ProbeRun,
  observations: readonly Observed[],
  caller: string | undefined,
  isAdmin: boolean,
): CallerFacts {
  const identities = new Set<string>();
  const knownEmails = new Map<string, string>();
  for (const user of run.sessions.users()) {
    if (user.username?.includes("@")) knownEmails.set(user.username.toLowerCase(), user.name);
    if (user.name === caller && user.username) identities.add(user.username.toLowerCase());
  }
  const ownCredentials = new Set<string>();
  for (const observed of observations) {
    if (observed.user !== caller || caller === undefined) continue;
    for (const header of Object.values(observed.exchange.request.headers))
      for (const part of header.split(/[\s;=,]+/)) if (part.length >= 8) ownCredentials.add(part);
    // The caller's own email, from an answer about itself.
    if (isSelfOperation(observed) && observed.purpose === "read")
      for (const email of emailsIn(observed.exchange.response?.json).slice(0, 1)) identities.add(email.value);
  }
  return {
    identities,
    isAdmin,
    adminOperation: (observed) => isAdminMarked(run.map, observed.operation),
    ownCredentials,
    knownEmails,
  };
}

/** A disclosure in an error answer counts when the same request discloses the same kind again. */
async function confirmDisclosures(
  run: ProbeRun,
  found: ExposureCandidate[],
  stats: { confirmations: number },
): Promise<ExposureCandidate[]> {
  const kept: ExposureCandidate[] = [];
  const replays = new Map<Observed, Promise<boolean>>();
  for (const candidate of found) {
    if (candidate.discriminator !== "error-disclosure") {
      kept.push(candidate);
      continue;
    }
    let replay = replays.get(candidate.observed);
    if (!replay) {
      stats.confirmations += 1;
      replay = repeat(run, candidate.observed).then((again) => {
        const response = again?.response;
        return Boolean(
          response &&
            disclosuresIn(response.body, response.json).some(
              (item) => item.kind === candidate.disclosure?.kind,
            ),
        );
      });
      // A replay the budget (or the network) refuses is no second signal.
      replay = replay.catch(() => false);
      replays.set(candidate.observed, replay);
    }
    if (await replay) kept.push(candidate);
  }
  return kept;
}

/**
 * One finding per place and kind (the strongest); error disclosures that share one signature on many
 * operations come from one handler, so past a few the rest ride along as related places.
 */
function choose(run: ProbeRun, found: ExposureCandidate[]): EnvelopeDraft[] {
  const chosen = new Map<string, ExposureCandidate>();
  const order = [
    "password-hash",
    "credential",
    "environment",
    "excessive-data",
    "personal-data",
    "error-disclosure",
  ];
  for (const candidate of found) {
    // Private fields reported as excessive data are not reported again as emails of other users.
    const group = candidate.discriminator === "personal-data" ? "excessive-data" : candidate.discriminator;
    const key = `${group}|${operationKey(candidate.observed.operation)}`;
    const known = chosen.get(key);
    if (!known || better(candidate, known)) chosen.set(key, candidate);
  }
  const sorted = [...chosen.values()].sort(
    (a, b) =>
      order.indexOf(a.discriminator) - order.indexOf(b.discriminator) ||
      operationKey(a.observed.operation).localeCompare(operationKey(b.observed.operation)),
  );
  const perSignature = new Map<string, ExposureCandidate[]>();
  const findings: Array<{ candidate: ExposureCandidate; related: string[] }> = [];
  for (const candidate of sorted) {
    if (candidate.discriminator !== "error-disclosure") {
      findings.push({ candidate, related: [] });
      continue;
    }
    const signature = candidate.what;
    const same = perSignature.get(signature) ?? [];
    same.push(candidate);
    perSignature.set(signature, same);
    if (same.length <= DISCLOSURES_PER_SIGNATURE) findings.push({ candidate, related: [] });
    else
      findings
        .find((entry) => entry.candidate === same[DISCLOSURES_PER_SIGNATURE - 1])
        ?.related.push(operationKey(candidate.observed.operation));
  }
  return findings.map(({ candidate, related }) => findingOf(run, candidate, related));
}

function better(candidate: ExposureCandidate, known: ExposureCandidate): boolean {
  const severity = ["low", "medium", "high", "critical"];
  if (candidate.confidence !== known.confidence) return candidate.confidence > known.confidence;
  return severity.indexOf(candidate.severity) > severity.indexOf(known.severity);
}

const IMPACT: Record<ExposureCandidate["discriminator"], string> = {
  "password-hash":
    "Password hashes can be cracked offline (plaintext needs no cracking); they must never leave the server.",
  credential: "Credentials or secrets let an attacker act as the application, its integrations or its users.",
  environment: "Secrets of the deployment (database URLs, keys) are readable by whoever gets this answer.",
  "excessive-data":
    "Private data of other people is disclosed beyond what the interface promises (OWASP API3).",
  "personal-data": "Personal data of other users is disclosed.",
  "error-disclosure": "Internals (source paths, modules, line numbers, queries) help an attacker aim.",
};

function findingOf(run: ProbeRun, candidate: ExposureCandidate, related: string[]): EnvelopeDraft {
  const { observed } = candidate;
  const key = operationKey(observed.operation);
  const step = stepFromPrepared("exposed", observed.prepared, observed.user);
  // A secret is masked everywhere, the test included: it asserts on the field or on the shape. An error
  // message is no secret, and masking its words would mangle the pattern the test matches it with.
  if (candidate.discriminator !== "error-disclosure") run.masker.addSecret(candidate.value);
  const assertion: ReproAssertion =
    candidate.path !== "text"
      ? {
          kind: "json_lacks",
          step: "exposed",
          path: dottedPath(candidate.path),
          message: `${candidate.what} must not be returned`,
        }
      : candidate.pattern
        ? {
            kind: "body_not_matches",
            step: "exposed",
            pattern: candidate.pattern,
            message: "error answers must not carry stack traces, debug pages or SQL",
          }
        : {
            kind: "body_lacks",
            step: "exposed",
            text: candidate.value,
            message: `${candidate.what} must not be returned`,
          };
  const who = observed.user ?? "anonymous";
  const how = describeObserved(observed);
  return buildFinding(run, {
    domain: "security",
    defectClass: candidate.defectClass,
    title:
      observed.purpose === "error"
        ? `${key} answers ${candidate.what} to a malformed ${observed.provoked ?? "request"}`
        : `${key} returns ${candidate.what}`,
    summary: `${how} (as ${who}, status ${observed.exchange.response?.status}) returned ${candidate.note}. Values are masked in the evidence.`,
    impact: IMPACT[candidate.discriminator],
    location: endpointLocation(observed.operation),
    related: related.length > 0 ? related.map((value) => ({ kind: "endpoint" as const, value })) : undefined,
    severity: candidate.severity,
    confidence: candidate.confidence,
    discriminator: candidate.discriminator,
    exchanges: [{ label: observed.purpose === "error" ? "error" : "exposed", exchange: observed.exchange }],
    notes: [
      candidate.note,
      ...(related.length > 0 ? [`the same ${candidate.what} also on ${related.join(", ")}`] : []),
    ],
    repro: { title: `${key} does not return ${candidate.what}`, steps: [step], assertions: [assertion] },
  });
}
