import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { DefectClass } from "../../envelope/taxonomy.ts";
import type { Operation } from "../../map/system-map.ts";
import { withEveryFormField } from "../auditor/form-body.ts";
import { hasSqlError } from "../auditor/sql-signatures.ts";
import type { ReproAssertion } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepsOnRecord } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { schemaArbitrary } from "../schema-values/arbitrary.ts";
import type { BodyMutation } from "../schema-values/edge-cases.ts";
import { bodyMutations, edgeCases } from "../schema-values/edge-cases.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { chooseBranch, propertiesOf, requiredOf } from "../schema-values/json-schema.ts";
import { findMinimalFailure, minimizeObject } from "../schema-values/shrink.ts";
import { acceptedSubmission } from "../session/form-submission.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { pastDateAccepted } from "./calendar-validation.ts";
import { catalogPriceStored } from "./catalog-price.ts";
import { clientPriceStored } from "./client-price.ts";
import { enumOutsideStored } from "./enum-validation.ts";
import { probeMassAssignment } from "./mass-assignment.ts";
import { isItemPath, isSafeWrite, operationKey, probeableOperations } from "./operation-index.ts";
import { SESSION_FIELD } from "./posting-forms.ts";
import {
  bodyExcerpt,
  candidateUsers,
  endpointLocation,
  isServerError,
  sendAsRightRole,
  sendPrepared,
} from "./probe-support.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { bodyKind, buildRequest, clonePrepared, requestSchema } from "./request-builder.ts";
import type { CreatedResource } from "./resource-factory.ts";
import { ResourceFactory, uniqueSeed } from "./resource-factory.ts";
import { calendarEdgeCases, pagePathCandidates, typedParameterSchema, uiQueryValues } from "./ui-values.ts";
import { echoes, looksLikeErrorPayload, reseed } from "./value-tools.ts";

export interface FuzzOptions {
  operation?: string;
  user?: string;
  /** Property-based runs per operation (0 turns the random search off). */
  property_runs?: number;
}

interface Baseline {
  operation: Operation;
  user: string | undefined;
  prepared: PreparedRequest;
  exchange: HttpExchange;
  resource: CreatedResource | undefined;
}

interface Failure {
  defectClass: DefectClass;
  /** `body:quantity`, `query:q`, `path:id`, or `body` for whole-body cases. */
  position: string;
  labels: string[];
  prepared: PreparedRequest;
  exchange: HttpExchange;
  echoed: boolean;
}

/**
 * fuzz_operation: edge and invalid values generated from each operation's schemas — boundaries, empty,
 * null, unicode, huge numbers, wrong types, long strings, missing fields, malformed JSON — one position at
 * a time on an otherwise valid request, then a bounded property-based search (fast-check, shrunk to a
 * minimal case) for server errors. A 5xx is `unhandled-error`; invalid input accepted with 2xx is
 * `validation-missing` (a 2xx carrying an error payload is `wrong-status`). Each is confirmed by a resend.
 * Writes are also tried for the business rules a tester checks by hand: past dates, values outside the set a
 * form offers, and a price the page fixes but the request carries.
 */
export async function fuzzOperations(
  run: ProbeRun,
  options: FuzzOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const candidates: EnvelopeDraft[] = [];
  const stats = {
    operations: 0,
    fuzzed: 0,
    mutations_sent: 0,
    property_checks: 0,
    skipped: {} as Record<string, number>,
  };
  const skip = (reason: string) => {
    stats.skipped[reason] = (stats.skipped[reason] ?? 0) + 1;
  };
  const factory = new ResourceFactory(run);
  const operations = probeableOperations(run.map, options.operation);
  stats.operations = operations.length;
  const exhausted = await untilBudget(run, async () => {
    const users = candidateUsers(await usableUsers(run), options.user);
    await mapConcurrent(operations, 8, async (operation) => {
      const method = operation.method.toUpperCase();
      if (method === "DELETE") return skip("delete");
      const write = method !== "GET" && method !== "HEAD";
      if (write && (!run.target.writesAllowed || !isSafeWrite(operation)))
        return skip(run.target.writesAllowed ? "unsafe write" : "writes not allowed");
      if (bodyKind(operation) === "unsupported") return skip("unsupported request body");
      if (write && method === "POST") candidates.push(...(await pastDateAccepted(run, operation, users)));
      if (write) candidates.push(...(await enumOutsideStored(run, factory, operation, users)));
      let baseline = await establish(run, factory, operation, users, write);
      // A busy server may drop or fail one request: the baseline is asked for once more before it counts.
      if (!baseline?.exchange.response || (baseline && isServerError(baseline.exchange))) {
        await pause(BUSY_PAUSE_MS);
        baseline = (await establish(run, factory, operation, users, write)) ?? baseline;
      }
      if (!baseline) return skip("no baseline request");
      if (isServerError(baseline.exchange)) return skip("baseline already fails (check_contract reports it)");
      stats.fuzzed += 1;
      if (write) {
        candidates.push(...(await clientPriceStored(run, baseline)));
        candidates.push(...(await catalogPriceStored(run, baseline)));
      }
      const failures = new Map<string, Failure>();
      const note = (failure: Failure) => {
        const key = `${failure.defectClass}|${failure.position}`;
        const known = failures.get(key);
        if (!known) failures.set(key, failure);
        else if (failure.echoed && !known.echoed)
          failures.set(key, { ...failure, labels: [...failure.labels, ...known.labels] });
        else known.labels.push(...failure.labels);
      };
      const baselineOk = acceptedSubmission(baseline.exchange);
      const schema = requestSchema(operation);
      if (schema && (bodyKind(operation) === "json" || bodyKind(operation) === "form")) {
        // A mangled anti-forgery token tests the framework's token check, not the operation: tokens travel in
        // the body but belong to the session layer.
        const mutations = bodyMutations(schema, baseline.prepared.body, baseline.prepared.seed ?? "", {
          form: bodyKind(operation) === "form",
        }).filter((mutation) => !mutation.field?.split(".").some((part) => SESSION_FIELD.test(part)));
        await mapConcurrent(mutations, 4, async (mutation) => {
          stats.mutations_sent += 1;
          const prepared = mutate(baseline, mutation);
          const exchange = await sendOnceMore(run, baseline.user, prepared);
          const verdict =
            exchange &&
            classify(
              exchange,
              mutation.expectation,
              baselineOk,
              allowsValidationOracle(operation, schema, mutation),
            );
          if (!exchange || !verdict) return;
          note({
            defectClass: verdict,
            position: mutation.field ? `body:${mutation.field}` : "body",
            labels: [mutation.label],
            prepared,
            exchange,
            echoed: mutation.field
              ? echoes(exchange.response?.json, mutation.field, mutatedValue(mutation))
              : false,
          });
        });
      }
      for (const parameter of operation.parameters) {
        if (parameter.in !== "query" && parameter.in !== "path") continue;
        const typed = typedParameterSchema(run.map, parameter);
        const cases = edgeCases(typed, { seed: uniqueSeed(), name: parameter.name, text: true });
        if (typed.format === "date" || typed.format === "date-time")
          cases.push(...calendarEdgeCases(typed.format));
        await mapConcurrent(cases, 4, async (edge) => {
          stats.mutations_sent += 1;
          const prepared = clonePrepared(baseline.prepared);
          const text = typeof edge.value === "string" ? edge.value : JSON.stringify(edge.value);
          if (parameter.in === "path") prepared.pathValues[parameter.name] = text;
          else prepared.query[parameter.name] = text;
          const exchange = await sendOnceMore(run, baseline.user, prepared);
          if (exchange && isServerError(exchange)) {
            note({
              defectClass: "unhandled-error",
              position: `${parameter.in}:${parameter.name}`,
              labels: [edge.label],
              prepared,
              exchange,
              echoed: false,
            });
          }
        });
      }
      const runs = options.property_runs ?? 12;
      const hasServerError = [...failures.values()].some(
        (failure) => failure.defectClass === "unhandled-error",
      );
      // A random search through a schema a reader guessed from a handler spends budget on its guesses.
      if (
        runs > 0 &&
        operation.documented &&
        !hasServerError &&
        baselineOk &&
        schema &&
        bodyKind(operation) === "json"
      ) {
        const found = await propertySearch(run, baseline, schema, runs);
        stats.property_checks += found.checks;
        if (found.failure) note(found.failure);
      }
      for (const failure of failures.values()) {
        if (looksLikeInjection(failure)) continue;
        const confirmed = await confirm(run, baseline, failure);
        if (confirmed) candidates.push(findingOf(run, baseline, confirmed));
      }
      const family = factory.families.find((candidate) => candidate.create === operation);
      if (family && method === "POST")
        candidates.push(...(await probeMassAssignment(run, factory, family, baseline.user)));
    });
  });
  return {
    candidates,
    stats: { ...stats, created_resources: factory.created.length, budget_exhausted: exhausted },
  };
}

async function establish(
  run: ProbeRun,
  factory: ResourceFactory,
  operation: Operation,
  users: ReadonlyArray<string | undefined>,
  write: boolean,
): Promise<Baseline | undefined> {
  const resources = new Map<string | undefined, CreatedResource | undefined>();
  const result = await sendAsRightRole(
    run,
    operation.security === "public" ? [users[0]] : users,
    async (user) => {
      const located = await factory.pathValuesFor(operation, user);
      if (!located || (write && isItemPath(operation.path) && !located.owned)) return undefined;
      resources.set(user, located.resource);
      // A form's baseline is sent as a browser sends it (form-body.ts): a handler that reads every control
      // refuses a body of the required fields alone, and then every mutation meets the same refusal.
      return withEveryFormField(
        withUiValues(run, buildRequest(operation, { seed: uniqueSeed(), pathValues: located.values })),
      );
    },
  );
  if (!result && !write) return establishFromPages(run, operation, users);
  return (
    result && {
      operation,
      user: result.user,
      prepared: result.prepared,
      exchange: result.exchange,
      resource: resources.get(result.user),
    }
  );
}

/** The request with the values the pages offer for its optional query parameters. */
function withUiValues(run: ProbeRun, prepared: PreparedRequest): PreparedRequest {
  prepared.query = { ...uiQueryValues(run.map, prepared.operation), ...prepared.query };
  return prepared;
}

/** Answers that say the request addressed nothing this user may read: try the next value or user. */
const NOT_ADDRESSED = new Set([301, 302, 303, 307, 308, 401, 403, 404, 405]);

/**
 * A read whose path values no resource family supplies, addressed with values seen in the pages' URLs:
 * each user (least privileged first) with each candidate until one is answered as something it may read.
 */
async function establishFromPages(
  run: ProbeRun,
  operation: Operation,
  users: ReadonlyArray<string | undefined>,
): Promise<Baseline | undefined> {
  const candidates = pagePathCandidates(run.map, operation);
  for (const user of operation.security === "public" ? users.slice(0, 1) : users) {
    for (const pathValues of candidates) {
      const prepared = withUiValues(run, buildRequest(operation, { seed: uniqueSeed(), pathValues }));
      const exchange = await sendPrepared(run, user, prepared);
      if (!exchange?.response || NOT_ADDRESSED.has(exchange.response.status)) continue;
      return { operation, user, prepared, exchange, resource: undefined };
    }
  }
  return undefined;
}

const BUSY_PAUSE_MS = 400;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends a request; one that got no answer at all (a timeout, a reset connection) is sent once more. */
async function sendOnceMore(
  run: ProbeRun,
  user: string | undefined,
  prepared: PreparedRequest,
): Promise<HttpExchange | undefined> {
  const exchange = await sendPrepared(run, user, prepared);
  if (!exchange || exchange.response) return exchange;
  await pause(BUSY_PAUSE_MS);
  return (await sendPrepared(run, user, clonePrepared(prepared))) ?? exchange;
}

function mutate(baseline: Baseline, mutation: BodyMutation): PreparedRequest {
  const prepared = clonePrepared(baseline.prepared);
  const seed = uniqueSeed();
  prepared.seed = seed;
  if (mutation.raw !== undefined) {
    prepared.rawBody = mutation.raw;
    prepared.contentType = "application/json";
  } else {
    prepared.body = reseed(mutation.body, baseline.prepared.seed, seed);
  }
  return prepared;
}

/**
 * A 5xx that carries a database error is the symptom of injection: the security probe confirms and reports
 * it there, so it is not reported twice under another domain. A 5xx an apostrophe provokes without one is
 * an ordinary unhandled error (a parser of quoted phrases, a split on quotes) and is reported here.
 */
function looksLikeInjection(failure: Failure): boolean {
  if (failure.defectClass !== "unhandled-error") return false;
  return hasSqlError(failure.exchange.response?.body ?? "");
}

function mutatedValue(mutation: BodyMutation): unknown {
  let current: unknown = mutation.body;
  for (const part of mutation.field.split("."))
    current = (current as Record<string, unknown> | undefined)?.[part];
  return current;
}

// Constraints a schema states outright; a bare type inferred from a handler may just be a reader's guess.
const STATED_CONSTRAINT =
  /^(not in enum|below minimum|above maximum|too long|too many items|empty string|empty array|does not match pattern|not a valid )/;

/**
 * Whether accepting this invalid value proves missing validation. `null` for an optional property is often
 * read as "absent" by correct servers, so accepting it proves nothing. Without a document, only the
 * constraints a schema states outright count (an enum, a bound, a pattern the source's validators declare),
 * not a type or a requiredness a reader guessed from how a handler reads its body.
 */
function allowsValidationOracle(operation: Operation, schema: JsonSchema, mutation: BodyMutation): boolean {
  if (!operation.documented && !STATED_CONSTRAINT.test(mutation.label)) return false;
  if (mutation.label !== "null" || !mutation.field) return true;
  const parts = mutation.field.split(".");
  let current = chooseBranch(schema);
  for (const [index, part] of parts.entries()) {
    if (!requiredOf(current).includes(part)) return false;
    if (index < parts.length - 1) current = chooseBranch(propertiesOf(current)[part] ?? {});
  }
  return true;
}

function classify(
  exchange: HttpExchange,
  expectation: "invalid" | "valid",
  baselineOk: boolean,
  validationOracle: boolean,
): DefectClass | undefined {
  if (isServerError(exchange)) return "unhandled-error";
  if (expectation === "invalid" && baselineOk && validationOracle && acceptedSubmission(exchange)) {
    return looksLikeErrorPayload(exchange.response?.json) ? "wrong-status" : "validation-missing";
  }
  return undefined;
}

async function propertySearch(
  run: ProbeRun,
  baseline: Baseline,
  schema: JsonSchema,
  runs: number,
): Promise<{ checks: number; failure?: Failure }> {
  const exchanges = new Map<string, { prepared: PreparedRequest; exchange: HttpExchange }>();
  const result = await findMinimalFailure(
    schemaArbitrary(schema, baseline.prepared.seed ?? "qaas"),
    async (body) => {
      const prepared = clonePrepared(baseline.prepared);
      prepared.body = body;
      const exchange = await sendPrepared(run, baseline.user, prepared);
      if (!exchange || !isServerError(exchange)) return false;
      exchanges.set(JSON.stringify(body), { prepared, exchange });
      return true;
    },
    { runs, maxChecks: runs + 24 },
  );
  if (!result) return { checks: runs };
  const minimal =
    exchanges.get(JSON.stringify(result.minimal)) ?? exchanges.get(JSON.stringify(result.original));
  if (!minimal) return { checks: result.checks };
  return {
    checks: result.checks,
    failure: {
      defectClass: "unhandled-error",
      position: "body",
      labels: [`property-based (shrunk in ${result.shrinks} steps)`],
      prepared: minimal.prepared,
      exchange: minimal.exchange,
      echoed: false,
    },
  };
}

/** Sends the failing request once more (fresh unique values); minimises a 5xx body by dropping keys. */
async function confirm(run: ProbeRun, baseline: Baseline, failure: Failure): Promise<Failure | undefined> {
  const again = clonePrepared(failure.prepared);
  const seed = uniqueSeed();
  again.body = reseed(again.body, failure.prepared.seed, seed);
  again.seed = seed;
  let retry = await sendOnceMore(run, baseline.user, again);
  // An accepted invalid value answered 5xx on its confirmation is a busy server, not a verdict: once more.
  if (retry && failure.defectClass !== "unhandled-error" && isServerError(retry)) {
    await pause(BUSY_PAUSE_MS);
    retry = await sendPrepared(run, baseline.user, clonePrepared(again));
  }
  if (!retry?.response) return undefined;
  const still = failure.defectClass === "unhandled-error" ? isServerError(retry) : acceptedSubmission(retry);
  if (!still) return undefined;
  if (
    failure.defectClass !== "unhandled-error" ||
    !again.body ||
    typeof again.body !== "object" ||
    Array.isArray(again.body)
  ) {
    return failure;
  }
  const field = failure.position.startsWith("body:") ? failure.position.slice(5).split(".")[0]! : "";
  await minimizeObject(
    again.body as Record<string, unknown>,
    new Set(field ? [field] : []),
    async (candidate) => {
      const attempt = clonePrepared(again);
      attempt.body = candidate;
      const exchange = await sendPrepared(run, baseline.user, attempt);
      if (exchange && isServerError(exchange)) {
        failure = { ...failure, prepared: attempt, exchange };
        return true;
      }
      return false;
    },
    4,
  );
  return failure;
}

/** Boundary violations explain a defect best; type confusions and nulls after them. */
function labelWeight(label: string): number {
  if (/minimum|maximum|too long|too many|not in enum|missing required|empty/.test(label)) return 0;
  if (/not a valid|pattern/.test(label)) return 1;
  return 2;
}

function findingOf(run: ProbeRun, baseline: Baseline, failure: Failure): EnvelopeDraft {
  const key = operationKey(baseline.operation);
  const status = failure.exchange.response?.status ?? 0;
  const labels = [...new Set(failure.labels)].sort((a, b) => labelWeight(a) - labelWeight(b));
  const where = failure.position === "body" ? "the body" : failure.position.replace(":", " ");
  const steps = stepsOnRecord("failing", failure.prepared, baseline.user, baseline.resource);
  let title: string;
  let summary: string;
  let impact: string;
  let assertion: ReproAssertion;
  if (failure.defectClass === "unhandled-error") {
    title = `${key} answers ${status} when ${where} is ${labels[0]}`;
    summary = `${key} crashed with ${status} for ${where} = ${labels.join(", ")} (confirmed by a second request). Body: ${bodyExcerpt(run, failure.exchange)}`;
    impact =
      "Client input reaches code that throws: the request fails with a server error instead of a 4xx the client can act on.";
    assertion = {
      kind: "status_below",
      step: "failing",
      value: 500,
      message: `${key} must answer a 4xx, not ${status}, for ${where} = ${labels[0]}`,
    };
  } else if (failure.defectClass === "validation-missing") {
    title = `${key} accepts ${labels[0]} for ${where}`;
    summary = `${key} answered ${status} to a request whose ${where} breaks the documented schema (${labels.join(", ")}); the document forbids it${failure.echoed ? " and the answer stores the value" : ""}.`;
    impact =
      "Invalid data is stored: later reads, totals and business rules work on values the API promised to refuse.";
    assertion = {
      kind: "not_success",
      step: "failing",
      message: `${key} must refuse ${where} = ${labels[0]} with a 4xx`,
    };
  } else {
    title = `${key} reports a refused ${where} with ${status}`;
    summary = `${key} refused ${where} = ${labels.join(", ")} with an error payload but status ${status}.`;
    impact = "Clients treat the failed request as a success.";
    assertion = {
      kind: "not_success",
      step: "failing",
      message: `${key} must signal the refusal with a 4xx status`,
    };
  }
  return buildFinding(run, {
    domain: "api",
    defectClass: failure.defectClass,
    title,
    summary,
    impact,
    location: endpointLocation(baseline.operation),
    severity: severityFor(failure.defectClass),
    confidence: failure.defectClass === "validation-missing" ? (failure.echoed ? 0.9 : 0.8) : 0.9,
    discriminator: failure.position,
    exchanges: [
      { label: "failing", exchange: failure.exchange },
      { label: "baseline", exchange: baseline.exchange },
    ],
    repro: { title: `${key} handles ${where} = ${labels[0]}`, steps, assertions: [assertion] },
  });
}
