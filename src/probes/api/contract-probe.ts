import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ReproAssertion, ReproStep } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepsOnRecord } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { inconsistentCreationStatus } from "./creation-status-consistency.ts";
import { answersJson, loginRedirectsForApi } from "./login-redirect.ts";
import { isItemPath, isSafeWrite, operationKey, probeableOperations } from "./operation-index.ts";
import {
  bodyExcerpt,
  candidateUsers,
  documentedStatuses,
  endpointLocation,
  isServerError,
  responseSchemaFor,
  sendAsRightRole,
  sendPrepared,
  statusDocumented,
} from "./probe-support.ts";
import { checkRepresentations } from "./representation-drift.ts";
import { bodyKind, buildRequest } from "./request-builder.ts";
import type { CreatedResource } from "./resource-factory.ts";
import { ResourceFactory, uniqueSeed } from "./resource-factory.ts";
import type { ContractIssue } from "./response-validator.ts";
import { ResponseValidator } from "./response-validator.ts";
import type { ValidObservation } from "./status-oracles.ts";
import { anonymousRefusalAsSuccess, repeatedCreationStatus } from "./status-oracles.ts";

const SENSITIVE_FIELD = /(pass(word|wd)?|hash|salt|secret|token|api_?key|private_?key|otp|ssn)[^.]*$/i;

export interface ContractOptions {
  operation?: string;
  user?: string;
}

type Observation = ValidObservation;

/** Phase of a stateful sequence: creations first, reads next, changes after, deletions last. */
function phaseOf(operation: Operation): number {
  const method = operation.method.toUpperCase();
  if (method === "POST" && !isItemPath(operation.path)) return 0;
  if (method === "GET" || method === "HEAD") return 1;
  if (method === "PUT" || method === "PATCH") return 2;
  if (method === "DELETE") return 4;
  return 3;
}

/**
 * check_contract: one valid request per documented operation (as the least privileged user it accepts,
 * with resources created first when it needs an id), its status and body checked against the document.
 * Reports a 5xx on a valid request (confirmed by a second try) and drift in status or body.
 */
export async function checkContract(
  run: ProbeRun,
  options: ContractOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const candidates: EnvelopeDraft[] = [];
  const stats = { operations: 0, checked: 0, skipped: {} as Record<string, number> };
  const skip = (reason: string) => {
    stats.skipped[reason] = (stats.skipped[reason] ?? 0) + 1;
  };
  const validator = new ResponseValidator(run.map.openapi?.version);
  const factory = new ResourceFactory(run);
  const operations = probeableOperations(run.map, options.operation);
  stats.operations = operations.length;
  const exhausted = await untilBudget(run, async () => {
    const users = candidateUsers(await usableUsers(run), options.user);
    // A few requests per collection, before the per-operation checks can spend the tool's cap.
    candidates.push(...(await checkRepresentations(run, factory, users)));
    const jsonReads: Observation[] = [];
    const creations: Observation[] = [];
    for (const phase of [0, 1, 2, 3, 4]) {
      const inPhase = operations.filter((operation) => phaseOf(operation) === phase);
      await mapConcurrent(inPhase, 16, async (operation) => {
        if (bodyKind(operation) === "unsupported") return skip("unsupported request body");
        const write = phase !== 1;
        if (write && (!run.target.writesAllowed || !isSafeWrite(operation))) {
          return skip(run.target.writesAllowed ? "unsafe write" : "writes not allowed");
        }
        const observation = await observe(run, factory, operation, users, write);
        if (!observation) return skip("no resource to address");
        stats.checked += 1;
        if (answersJson(observation)) jsonReads.push(observation);
        if (phase === 0) creations.push(observation);
        const finding = await judge(run, validator, observation);
        candidates.push(...finding);
      });
    }
    candidates.push(...(await loginRedirectsForApi(run, jsonReads)));
    candidates.push(...(await inconsistentCreationStatus(run, factory, creations)));
  });
  return {
    candidates,
    stats: { ...stats, created_resources: factory.created.length, budget_exhausted: exhausted },
  };
}

async function observe(
  run: ProbeRun,
  factory: ResourceFactory,
  operation: Operation,
  users: ReadonlyArray<string | undefined>,
  write: boolean,
): Promise<Observation | undefined> {
  const resources = new Map<string | undefined, CreatedResource | undefined>();
  const result = await sendAsRightRole(
    run,
    operation.security === "public" ? [users[0]] : users,
    async (user) => {
      const located = await factory.pathValuesFor(operation, user, {
        fresh: operation.method.toUpperCase() === "DELETE",
      });
      if (!located) return undefined;
      // Only the probe's own resources may be changed or deleted.
      if (write && isItemPath(operation.path) && !located.owned) return undefined;
      resources.set(user, located.resource);
      return buildRequest(operation, { seed: uniqueSeed(), pathValues: located.values });
    },
  );
  if (!result) return undefined;
  return {
    operation,
    user: result.user,
    prepared: result.prepared,
    exchange: result.exchange,
    resource: resources.get(result.user),
  };
}

async function judge(
  run: ProbeRun,
  validator: ResponseValidator,
  observation: Observation,
): Promise<EnvelopeDraft[]> {
  const { operation, exchange } = observation;
  const status = exchange.response?.status ?? 0;
  if (isServerError(exchange)) {
    // A second try rules out a passing hiccup; a write gets fresh values (a unique name may now be taken).
    const again =
      operation.method.toUpperCase() === "POST"
        ? buildRequest(operation, { seed: uniqueSeed(), pathValues: observation.prepared.pathValues })
        : observation.prepared;
    const retry = await sendPrepared(run, observation.user, again);
    if (!isServerError(retry)) return [];
    return [serverErrorFinding(run, observation, retry!)];
  }
  if (!isSuccess(exchange)) return [];
  const findings: EnvelopeDraft[] = [
    ...(await anonymousRefusalAsSuccess(run, observation)),
    ...(await repeatedCreationStatus(run, observation)),
  ];
  if (!operation.documented) return findings;
  if (!statusDocumented(operation, status)) findings.push(undocumentedStatusFinding(run, observation));
  const schema = responseSchemaFor(operation, status);
  const json = exchange.response?.json;
  if (schema && status !== 204 && (json !== undefined || exchange.response?.contentType.includes("json"))) {
    const issues = validator.validate(schema, json);
    // An undocumented password hash or token is the auditor's finding (sensitive data), not drift.
    const structural = issues.filter(
      (issue) => issue.kind !== "format" && !(issue.kind === "extra" && SENSITIVE_FIELD.test(issue.path)),
    );
    const formats = issues.filter((issue) => issue.kind === "format");
    // Missing, extra, mistyped or unlisted values are drift in the shape; a value outside a documented
    // bound (a minimum, a maxItems) usually follows from data another defect let in, so it is held.
    const shape = structural.filter((issue) => issue.kind !== "constraint");
    if (shape.length > 0) findings.push(bodyDriftFinding(run, observation, structural, 0.85));
    else if (structural.length > 0) findings.push(bodyDriftFinding(run, observation, structural, 0.6));
    else if (formats.length > 0) findings.push(bodyDriftFinding(run, observation, formats, 0.6));
  }
  return findings;
}

function reproBase(observation: Observation): { steps: ReproStep[]; target: string } {
  return {
    steps: stepsOnRecord("observed", observation.prepared, observation.user, observation.resource),
    target: "observed",
  };
}

function serverErrorFinding(run: ProbeRun, observation: Observation, retry: HttpExchange): EnvelopeDraft {
  const key = operationKey(observation.operation);
  const { steps, target } = reproBase(observation);
  return buildFinding(run, {
    domain: "api",
    defectClass: "unhandled-error",
    title: `${key} answers ${observation.exchange.response?.status} to a valid request`,
    summary: `A request built from the document's schema for ${key} (as ${observation.user ?? "anonymous"}) answered ${observation.exchange.response?.status} twice. Body: ${bodyExcerpt(run, observation.exchange)}`,
    impact:
      "A valid request fails with a server error: the feature is broken for callers that follow the document.",
    location: endpointLocation(observation.operation),
    severity: severityFor("unhandled-error"),
    confidence: 0.9,
    discriminator: "valid-request",
    exchanges: [
      { label: "valid-request", exchange: observation.exchange },
      { label: "retry", exchange: retry },
    ],
    repro: {
      title: `${key} does not fail with a server error on a valid request`,
      steps,
      assertions: [
        {
          kind: "status_below",
          step: target,
          value: 500,
          message: `${key} must not answer 5xx to a valid request`,
        },
      ],
    },
  });
}

function undocumentedStatusFinding(run: ProbeRun, observation: Observation): EnvelopeDraft {
  const key = operationKey(observation.operation);
  const status = observation.exchange.response?.status ?? 0;
  const documented = documentedStatuses(observation.operation);
  const { steps, target } = reproBase(observation);
  return buildFinding(run, {
    domain: "api",
    defectClass: "contract-drift",
    title: `${key} answers ${status}, which the document does not list`,
    summary: `The document lists ${documented.join(", ") || "no explicit status"} for ${key}; a valid request answered ${status}.`,
    impact: "Clients generated from the document mishandle the real answer.",
    location: endpointLocation(observation.operation),
    severity: severityFor("contract-drift"),
    confidence: 0.85,
    discriminator: `status-${status}`,
    exchanges: [{ label: "valid-request", exchange: observation.exchange }],
    repro: {
      title: `${key} answers a documented status`,
      steps,
      assertions: [
        {
          kind: "status_in",
          step: target,
          values: documented,
          message: `${key} must answer one of ${documented.join(", ")}`,
        },
      ],
    },
  });
}

/** What a body-drift test asserts: each issue as the document states it (at most twelve). */
export function driftAssertions(issues: readonly ContractIssue[], target: string): ReproAssertion[] {
  const assertions: ReproAssertion[] = [];
  for (const issue of issues.slice(0, 12)) {
    // The body's own type (an object where the document says a list) is asserted at the root.
    if (issue.path === "(root)" && issue.kind !== "type") continue;
    const path = issue.path === "(root)" ? "" : issue.path.replace(/(^|\.)\*(?=\.|$)/g, "$1*");
    if (issue.kind === "missing")
      assertions.push({ kind: "json_has", step: target, path, message: `${path}: ${issue.message}` });
    else if (issue.kind === "extra")
      assertions.push({ kind: "json_lacks", step: target, path, message: `${path}: ${issue.message}` });
    else if (issue.kind === "type") {
      const expected = issue.message.match(/^expected ([a-z,]+)/)?.[1]?.split(",")[0] ?? "object";
      assertions.push({
        kind: "json_type",
        step: target,
        path,
        type: expected,
        message: `${path || "the body"}: ${issue.message}`,
      });
    }
  }
  if (assertions.length === 0) {
    assertions.push({
      kind: "json_type",
      step: target,
      path: "",
      type: "object",
      message: "the body must match the documented schema",
    });
  }
  return assertions;
}

function bodyDriftFinding(
  run: ProbeRun,
  observation: Observation,
  issues: ContractIssue[],
  confidence: number,
): EnvelopeDraft {
  const key = operationKey(observation.operation);
  const status = observation.exchange.response?.status ?? 0;
  const { steps, target } = reproBase(observation);
  const assertions = driftAssertions(issues, target);
  const kinds = [...new Set(issues.map((issue) => issue.kind))].sort();
  return buildFinding(run, {
    domain: "api",
    defectClass: "contract-drift",
    title: `${key} ${status} body differs from the document (${kinds.join(", ")})`,
    summary: `The ${status} body of ${key} does not match the documented schema: ${issues
      .slice(0, 10)
      .map((issue) => `${issue.path}: ${issue.message}`)
      .join("; ")}.`,
    impact: "Clients relying on the document read missing, renamed or mistyped fields.",
    location: endpointLocation(observation.operation),
    severity: severityFor("contract-drift"),
    confidence,
    discriminator: `body-${status}`,
    exchanges: [{ label: "valid-request", exchange: observation.exchange }],
    notes: issues.map((issue) => `${issue.kind} at ${issue.path}: ${issue.message}`),
    repro: { title: `${key} ${status} body matches the document`, steps, assertions },
  });
}
