import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { DefectClass } from "../../envelope/taxonomy.ts";
import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation, isSafeWrite, operationKey, selectOperations } from "../api/operation-index.ts";
import { endpointLocation, sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { bodyKind, buildRequest } from "../api/request-builder.ts";
import { ResourceFactory, uniqueSeed } from "../api/resource-factory.ts";
import type { ReproAssertion } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { SECRET_VALUE_PATTERNS } from "../http/masking.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { byPrivilege, isAdminLike } from "../session/roles.ts";
import { severityFor } from "../severity.ts";
import { isAdminMarked } from "./admin-marked.ts";
import type { Exposure } from "./sensitive-patterns.ts";
import {
  emailsIn,
  findEnvironment,
  findHashes,
  findSecrets,
  findStackTrace,
  STACK_TRACE,
} from "./sensitive-patterns.ts";

export interface ExposureOptions {
  operation?: string;
  user?: string;
}

/** Debug-shaped routes are check_misconfiguration's; scanning them here would report one leak twice. */
export const DEBUG_SEGMENT =
  /^(debug|_debug|__debug__|env|environment|config|configuration|actuator|metrics|phpinfo(\.php)?|server-status|server-info|_profiler|heapdump|threaddump|trace|vars|expvar|diagnostics|\.env|\.git)$/i;

/** Harvested items read besides the first, per operation: enough to meet another user, bounded. */
const MORE_ITEMS = 2;

interface Observed {
  operation: Operation;
  prepared: PreparedRequest;
  user: string | undefined;
  exchange: HttpExchange;
  purpose: "read" | "error";
  /** A record of another user, addressed by an id the caller saw in its own answers. */
  ofAnother?: boolean;
}

interface Candidate {
  defectClass: DefectClass;
  discriminator: string;
  exposure: Exposure;
  observed: Observed;
  confidence: number;
  note: string;
}

/**
 * scan_exposure: reads every GET (as the least privileged user, and anonymously where the document says
 * public; item reads also at ids of other users the caller saw in its own answers) and provokes an error
 * on each operation (a malformed id or body), then looks in what comes back
 * for password hashes, secrets (known key shapes, and secret-named fields with high-entropy values),
 * other users' email addresses, environment values and stack traces.
 */
export async function scanExposure(
  run: ProbeRun,
  options: ExposureOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const found: Candidate[] = [];
  const stats = { reads: 0, errors_provoked: 0 };
  const factory = new ResourceFactory(run);
  const operations = selectOperations(run.map, options.operation).filter(
    (operation) =>
      !toTemplateForm(operation.path)
        .split("/")
        .some((segment) => DEBUG_SEGMENT.test(segment)),
  );
  const exhausted = await untilBudget(run, async () => {
    const users = byPrivilege(await usableUsers(run)).filter(
      (user) => !options.user || user.name === options.user,
    );
    const caller = users[0];
    const knownEmails = new Map<string, string>();
    for (const user of users)
      if (user.username?.includes("@")) knownEmails.set(user.username.toLowerCase(), user.name);
    const observations: Observed[] = [];
    await mapConcurrent(operations, 8, async (operation) => {
      const method = operation.method.toUpperCase();
      const located = await factory.pathValuesFor(operation, caller?.name).catch(() => undefined);
      if (method === "GET" && located) {
        const others = await otherItems(factory, operation, caller?.name, located);
        for (const values of [located.values, ...others]) {
          const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: values });
          const callers = operation.security === "public" ? [caller?.name, undefined] : [caller?.name];
          // Another user's own record names its own email: only hashes and secrets count there.
          const ofAnother = values !== located.values;
          for (const user of [...new Set(callers)]) {
            const exchange = await sendPrepared(run, user, prepared);
            stats.reads += 1;
            if (exchange)
              observations.push({ operation, prepared, user, exchange, purpose: "read", ofAnother });
          }
        }
      }
      const broken = provokeError(run, operation, located?.values);
      if (broken) {
        const exchange = await sendPrepared(run, caller?.name, broken);
        stats.errors_provoked += 1;
        if (exchange)
          observations.push({ operation, prepared: broken, user: caller?.name, exchange, purpose: "error" });
      }
    });
    for (const observed of observations)
      found.push(...inspect(run, observed, knownEmails, caller ? isAdminLike(caller.role) : false));
  });
  return {
    candidates: choose(run, found),
    stats: { ...stats, exposures: found.length, budget_exhausted: exhausted },
  };
}

/**
 * Items of other users the caller can address: ids it saw in its own answers (a colleague's id in an
 * `assignee_id`), read as well as the first one. Only for items addressed by their id alone.
 */
async function otherItems(
  factory: ResourceFactory,
  operation: Operation,
  caller: string | undefined,
  located: { values: Record<string, string>; owned: boolean },
): Promise<Array<Record<string, string>>> {
  const family = factory.familyOf(operation);
  const idParameter = family?.idParameter;
  if (!family || !idParameter || located.owned) return [];
  if (pathParameterNames(operation.path).some((name) => name !== idParameter)) return [];
  const ids = await factory.harvestedIds(family, caller, { every: true });
  return ids
    .filter((id) => id !== located.values[idParameter])
    .slice(0, MORE_ITEMS)
    .map((id) => ({ [idParameter]: id }));
}

/** A request the server must refuse: a malformed id in the path, or a malformed JSON body. */
function provokeError(
  run: ProbeRun,
  operation: Operation,
  values: Record<string, string> | undefined,
): PreparedRequest | undefined {
  const method = operation.method.toUpperCase();
  const names = pathParameterNames(operation.path);
  if (method === "GET" && names.length > 0) {
    const broken = Object.fromEntries(names.map((name) => [name, values?.[name] ?? "1"]));
    broken[names[names.length - 1]!] = `'"><%{qaas}`;
    return buildRequest(operation, { seed: uniqueSeed(), pathValues: broken });
  }
  if (
    (method === "POST" || method === "PUT" || method === "PATCH") &&
    bodyKind(operation) === "json" &&
    run.target.writesAllowed &&
    isSafeWrite(operation)
  ) {
    if (names.length > 0 && !values) return undefined;
    const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: values });
    prepared.rawBody = '{"qaas": ';
    return prepared;
  }
  return undefined;
}

function inspect(
  run: ProbeRun,
  observed: Observed,
  knownEmails: Map<string, string>,
  callerIsAdmin: boolean,
): Candidate[] {
  const response = observed.exchange.response;
  if (!response) return [];
  const candidates: Candidate[] = [];
  const json = response.json;
  const text = response.body;
  for (const exposure of findHashes(json, text)) {
    candidates.push({
      defectClass: "sensitive-data-exposure",
      discriminator: "password-hash",
      exposure,
      observed,
      confidence: 0.9,
      note: `${exposure.what} at ${exposure.path}`,
    });
  }
  const ownCredentials = new Set<string>();
  for (const header of Object.values(observed.exchange.request.headers))
    for (const part of header.split(/[\s;=]+/)) ownCredentials.add(part);
  const secrets = findSecrets(json, text).filter((exposure) => !ownCredentials.has(exposure.value));
  const shapeKnown = (exposure: Exposure) =>
    SECRET_VALUE_PATTERNS.some(({ name }) => name === exposure.what && !/web token/.test(name));
  const distinct = new Set(secrets.map((exposure) => exposure.value));
  const auth = isAuthOperation(observed.operation);
  for (const exposure of secrets) {
    const telling =
      shapeKnown(exposure) || observed.user === undefined || distinct.size >= 2 || response.status >= 400;
    if (auth && !shapeKnown(exposure)) continue;
    if (!telling) continue;
    candidates.push({
      defectClass: "secret-exposure",
      discriminator: "credential",
      exposure,
      observed,
      confidence: shapeKnown(exposure) ? 0.9 : 0.8,
      note: `${exposure.what} at ${exposure.path}`,
    });
  }
  if (json !== undefined) {
    const environment = findEnvironment(json);
    if (environment)
      candidates.push({
        defectClass: "secret-exposure",
        discriminator: "environment",
        exposure: environment,
        observed,
        confidence: 0.85,
        note: environment.what,
      });
  }
  const trace = findStackTrace(text);
  if (trace)
    candidates.push({
      defectClass: "sensitive-data-exposure",
      discriminator: "stack-trace",
      exposure: trace,
      observed,
      confidence: 0.7,
      note: trace.what,
    });
  if (
    !callerIsAdmin &&
    !observed.ofAnother &&
    !isAdminMarked(run.map, observed.operation) &&
    json !== undefined
  ) {
    const emails = emailsIn(json);
    const callerEmail = [...knownEmails.entries()].find(([, name]) => name === observed.user)?.[0];
    const others = emails.filter((email) => email.value !== callerEmail);
    const ofProfileUsers = others.filter((email) => knownEmails.has(email.value));
    const distinctOthers = new Set(others.map((email) => email.value));
    if (
      ofProfileUsers.length > 0 ||
      (observed.user === undefined && distinctOthers.size > 0) ||
      distinctOthers.size >= 3
    ) {
      const first = ofProfileUsers[0] ?? others[0]!;
      candidates.push({
        defectClass: "sensitive-data-exposure",
        discriminator: "personal-data",
        exposure: {
          kind: "personal",
          what: "email addresses of other users",
          path: first.path,
          value: first.value,
        },
        observed,
        confidence: ofProfileUsers.length > 0 ? 0.85 : 0.7,
        note: `${distinctOthers.size} email address(es) of other users, e.g. at ${first.path}`,
      });
    }
  }
  return candidates;
}

/** One finding per place and kind; stack traces once per target (they come from one error handler). */
function choose(run: ProbeRun, found: Candidate[]): EnvelopeDraft[] {
  const chosen = new Map<string, Candidate>();
  for (const candidate of found) {
    const key =
      candidate.discriminator === "stack-trace"
        ? "stack-trace"
        : `${candidate.discriminator}|${operationKey(candidate.observed.operation)}`;
    const known = chosen.get(key);
    if (!known || candidate.confidence > known.confidence) chosen.set(key, candidate);
  }
  return [...chosen.values()].map((candidate) => findingOf(run, candidate));
}

function findingOf(run: ProbeRun, candidate: Candidate): EnvelopeDraft {
  const { observed, exposure } = candidate;
  const key = operationKey(observed.operation);
  const step = stepFromPrepared("exposed", observed.prepared, observed.user);
  // The value itself is masked everywhere, the test included: it asserts on the field or on the shape.
  run.masker.addSecret(exposure.value);
  const shape = SECRET_VALUE_PATTERNS.find(({ name }) => name === exposure.what)?.pattern.source;
  const assertion: ReproAssertion =
    exposure.path !== "text"
      ? {
          kind: "json_lacks",
          step: "exposed",
          path: exposure.path.replace(/\[(\d+)\]/g, ".$1"),
          message: `${exposure.what} must not be returned`,
        }
      : candidate.discriminator === "stack-trace"
        ? {
            kind: "body_not_matches",
            step: "exposed",
            pattern: STACK_TRACE.map(({ pattern }) => pattern.source).join("|"),
            message: "error answers must not carry stack traces",
          }
        : {
            kind: "body_not_matches",
            step: "exposed",
            pattern: shape ?? "(?!)",
            message: `${exposure.what} must not be returned`,
          };
  const who = observed.user ?? "anonymous";
  return buildFinding(run, {
    domain: "security",
    defectClass: candidate.defectClass,
    title: `${key} returns ${exposure.what}${observed.purpose === "error" ? " in an error answer" : ""}`,
    summary: `${key} (as ${who}, status ${observed.exchange.response?.status}) returned ${candidate.note}. The value is masked in the evidence.`,
    impact:
      candidate.discriminator === "password-hash"
        ? "Password hashes can be cracked offline; they must never leave the server."
        : candidate.discriminator === "personal-data"
          ? "Personal data of other users is disclosed."
          : candidate.discriminator === "stack-trace"
            ? "Internals (paths, modules, line numbers) help an attacker aim."
            : "Credentials or secrets let an attacker act as the application or its users.",
    location: endpointLocation(observed.operation),
    severity: severityFor(candidate.defectClass, {
      exposure: exposure.kind,
      anonymous: observed.user === undefined,
    }),
    confidence: candidate.confidence,
    discriminator: candidate.discriminator,
    exchanges: [{ label: observed.purpose, exchange: observed.exchange }],
    notes: [candidate.note],
    repro: { title: `${key} does not return ${exposure.what}`, steps: [step], assertions: [assertion] },
  });
}
