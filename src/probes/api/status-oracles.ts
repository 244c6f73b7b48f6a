import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import {
  creationSteps,
  idStepsFor,
  NO_CREATION,
  stepFromPrepared,
  stepsOnRecord,
} from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { operationKey } from "./operation-index.ts";
import {
  bodyExcerpt,
  documentedStatuses,
  endpointLocation,
  sendPrepared,
  statusDocumented,
} from "./probe-support.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { clonePrepared } from "./request-builder.ts";
import type { CreatedResource } from "./resource-factory.ts";
import { looksLikeErrorPayload } from "./value-tools.ts";

// Status oracles that need a second request beside check_contract's valid one: a refusal disguised as a
// success when the caller is anonymous, and the status a repeated creation answers.

/** One valid request check_contract sent and the answer it got. */
export interface ValidObservation {
  operation: Operation;
  user: string | undefined;
  prepared: PreparedRequest;
  exchange: HttpExchange;
  resource?: CreatedResource;
}

/** Statuses every operation may answer whatever its document says: credentials, rate limits. */
const GENERIC_REFUSAL = new Set([401, 403, 407, 429]);

function baseSteps(observation: ValidObservation, name: string): ReproStep[] {
  return stepsOnRecord(name, observation.prepared, observation.user, observation.resource);
}

/**
 * A read that answers a signed-in user with data and an anonymous caller with 2xx and an error body (`{error:
 * "login required"}`) refuses with the wrong status: clients, caches and monitors see a success. Two signals:
 * the signed-in answer is not an error, the anonymous one is, twice.
 */
export async function anonymousRefusalAsSuccess(
  run: ProbeRun,
  observation: ValidObservation,
): Promise<EnvelopeDraft[]> {
  const { operation, exchange } = observation;
  const method = operation.method.toUpperCase();
  if (method !== "GET" || observation.user === undefined || operation.security === "public") return [];
  if (!isSuccess(exchange) || looksLikeErrorPayload(exchange.response?.json)) return [];
  const anonymous = clonePrepared(observation.prepared);
  const first = await sendPrepared(run, undefined, anonymous);
  if (!first || !isSuccess(first) || !looksLikeErrorPayload(first.response?.json)) return [];
  if (first.response?.body === exchange.response?.body) return [];
  const again = await sendPrepared(run, undefined, clonePrepared(anonymous));
  if (!again || !isSuccess(again) || !looksLikeErrorPayload(again.response?.json)) return [];
  const key = operationKey(operation);
  const created = observation.resource ? creationSteps(observation.resource) : NO_CREATION;
  return [
    buildFinding(run, {
      domain: "api",
      defectClass: "wrong-status",
      title: `${key} refuses an anonymous caller with ${statusOf(first)}`,
      summary: `Without credentials ${key} answered ${statusOf(first)} with an error body (twice) instead of 401; signed in as ${observation.user} it answered ${statusOf(exchange)} with data. Body: ${bodyExcerpt(run, first)}`,
      impact: "Clients, caches and monitors read a refusal as a success and cannot tell they must sign in.",
      location: endpointLocation(operation),
      severity: severityFor("wrong-status"),
      confidence: 0.85,
      discriminator: "anonymous-error-2xx",
      exchanges: [
        { label: "signed-in", exchange },
        { label: "anonymous", exchange: first },
        { label: "anonymous-again", exchange: again },
      ],
      repro: {
        title: `${key} answers 401 to an anonymous caller`,
        steps: [
          ...created.steps,
          stepFromPrepared("anonymous", anonymous, undefined, idStepsFor(anonymous, created)),
        ],
        assertions: [
          {
            kind: "not_success",
            step: "anonymous",
            message: `${key} must refuse an anonymous caller with a 4xx status`,
          },
        ],
      },
    }),
  ];
}

/**
 * The same creation sent again (same unique values) meets the first one's record: the refusal it answers
 * (409 Conflict, 422, 400) must be a status the document lists. Confirmed by a third send.
 */
export async function repeatedCreationStatus(
  run: ProbeRun,
  observation: ValidObservation,
): Promise<EnvelopeDraft[]> {
  const { operation, exchange } = observation;
  if (operation.method.toUpperCase() !== "POST" || !operation.documented) return [];
  // Under a parent (`/projects/{id}/entries`) each extra creation spends the parent's shared state
  // (budgets, counters) other probes still rely on: only top-level collections are repeated.
  if (pathParameterNames(operation.path).length > 0) return [];
  if (documentedStatuses(operation).length === 0 || !isSuccess(exchange)) return [];
  const repeat = await sendPrepared(run, observation.user, clonePrepared(observation.prepared));
  const status = statusOf(repeat);
  if (!repeat || status < 400 || status >= 500 || GENERIC_REFUSAL.has(status)) return [];
  if (statusDocumented(operation, status)) return [];
  const third = await sendPrepared(run, observation.user, clonePrepared(observation.prepared));
  if (!third || statusOf(third) !== status) return [];
  const key = operationKey(operation);
  const documented = documentedStatuses(operation);
  const steps = baseSteps(observation, "first");
  steps.push({ ...steps[steps.length - 1]!, name: "repeat" });
  return [
    buildFinding(run, {
      domain: "api",
      defectClass: "contract-drift",
      title: `${key} answers ${status} to a repeated request, which the document does not list`,
      summary: `The document lists ${documented.join(", ")} for ${key}. The same valid request sent twice answered ${statusOf(exchange)} and then ${status} (again on a third try). Body: ${bodyExcerpt(run, repeat)}`,
      impact: "Clients generated from the document do not expect this answer and mishandle it.",
      location: endpointLocation(operation),
      severity: severityFor("contract-drift"),
      confidence: 0.85,
      discriminator: `status-${status}`,
      exchanges: [
        { label: "first", exchange },
        { label: "repeat", exchange: repeat },
        { label: "third", exchange: third },
      ],
      repro: {
        title: `${key} answers a documented status to a repeated request`,
        steps,
        assertions: [
          {
            kind: "status_in",
            step: "repeat",
            values: documented,
            message: `${key} must answer one of ${documented.join(", ")}`,
          },
        ],
      },
    }),
  ];
}
