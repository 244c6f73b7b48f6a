import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { buildFinding } from "../evidence/finding.ts";
import { creationSteps, idStepsFor, NO_CREATION, stepFromPrepared } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { isAdminLike } from "../session/roles.ts";
import { severityFor } from "../severity.ts";
import { missingReadAnsweredEmpty } from "./missing-resource-status.ts";
import { operationKey, probeableOperations } from "./operation-index.ts";
import { bodyExcerpt, endpointLocation, isServerError, sendPrepared } from "./probe-support.ts";
import { buildRequest } from "./request-builder.ts";
import { ResourceFactory, uniqueSeed } from "./resource-factory.ts";
import { deleteTwiceFails, getChangesState } from "./semantics-repeats.ts";
import type { Oracle } from "./semantics-support.ts";
import { missingId, stepsFor } from "./semantics-support.ts";
import {
  deletedStillReadable,
  listOmitsCreated,
  putNotIdempotent,
  refusedWriteApplied,
} from "./semantics-writes.ts";
import { looksLikeErrorPayload } from "./value-tools.ts";

export interface SemanticsOptions {
  operation?: string;
  user?: string;
}

/**
 * probe_semantics: HTTP-semantics oracles on resources the probe creates itself — a deleted resource that
 * stays readable, a refused PUT/PATCH that changed the resource anyway, a PUT that is not idempotent, a
 * list that omits a just-created item, an unknown id answered 2xx or 5xx, and 403-versus-404 answers that
 * reveal whether another user's resource exists.
 */
export async function probeSemantics(
  run: ProbeRun,
  options: SemanticsOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const candidates: EnvelopeDraft[] = [];
  const stats = { families: 0, oracles_run: 0, skipped: {} as Record<string, number> };
  const factory = new ResourceFactory(run);
  const selected = new Set(probeableOperations(run.map, options.operation));
  const families = factory.families.filter((family) =>
    [family.create, family.list, family.read, family.remove, ...family.updates].some(
      (operation) => operation && selected.has(operation),
    ),
  );
  stats.families = families.length;
  const exhausted = await untilBudget(run, async () => {
    const users = await usableUsers(run);
    const owner = options.user ?? users.find((user) => !isAdminLike(user.role))?.name ?? users[0]?.name;
    const ownerUser = users.find((user) => user.name === owner);
    const other =
      users.find(
        (user) => user.name !== owner && !isAdminLike(user.role) && user.tenant === ownerUser?.tenant,
      ) ?? users.find((user) => user.name !== owner && !isAdminLike(user.role));
    const oracles: Oracle[] = [unknownIdOracle, missingReadAnsweredEmpty, existenceOracle];
    if (run.target.writesAllowed)
      oracles.push(
        deletedStillReadable,
        deleteTwiceFails,
        getChangesState,
        refusedWriteApplied,
        putNotIdempotent,
        listOmitsCreated,
      );
    else stats.skipped["writes not allowed"] = families.length;
    await mapConcurrent(families, 8, async (family) => {
      for (const oracle of oracles) {
        stats.oracles_run += 1;
        candidates.push(...(await oracle(run, factory, family, owner, other)));
      }
    });
  });
  return {
    candidates,
    stats: { ...stats, created_resources: factory.created.length, budget_exhausted: exhausted },
  };
}

/**
 * An id that does not exist must answer 404 (or 400/410), not 5xx and not a 2xx: neither an empty 2xx where
 * the document promises a 404, nor a 2xx whose body says the record was not found while a real id answers
 * a record (the two answers differ in kind, the second signal), confirmed by a repeat.
 */
const unknownIdOracle: Oracle = async (run, factory, family, owner) => {
  if (!family.read || !family.idParameter) return [];
  const located = await factory.pathValuesFor(family.read, owner);
  if (!located) return [];
  const existing = located.values[family.idParameter]!;
  const prepared = buildRequest(family.read, {
    seed: uniqueSeed(),
    pathValues: { ...located.values, [family.idParameter]: missingId(existing) },
  });
  const answer = await sendPrepared(run, owner, prepared);
  if (!answer) return [];
  const status = statusOf(answer);
  const json = answer.response?.json;
  const emptyish =
    json === null || json === undefined || (typeof json === "object" && Object.keys(json).length === 0);
  const serverError = isServerError(answer);
  const errorBody = isSuccess(answer) && looksLikeErrorPayload(json);
  // An empty 2xx is wrong only where the document promises a "not found" answer for this operation.
  const emptyButPromised = isSuccess(answer) && emptyish && documentsNotFound(family.read);
  if (!serverError && !errorBody && !emptyButPromised) return [];
  if (errorBody) {
    const real = await sendPrepared(
      run,
      owner,
      buildRequest(family.read, { seed: uniqueSeed(), pathValues: located.values }),
    );
    if (!real || !isSuccess(real) || looksLikeErrorPayload(real.response?.json)) return [];
  }
  const confirm = await sendPrepared(run, owner, prepared);
  if (!confirm || statusOf(confirm) !== status) return [];
  if (errorBody && !looksLikeErrorPayload(confirm.response?.json)) return [];
  const key = operationKey(family.read);
  const defectClass = serverError ? "unhandled-error" : "wrong-status";
  const steps = located.resource
    ? stepsFor(located.resource, [{ name: "missing", prepared, user: owner }])
    : [stepFromPrepared("missing", prepared, owner)];
  const what = serverError ? "" : errorBody ? " with an error in the body" : " with an empty body";
  return [
    buildFinding(run, {
      domain: "api",
      defectClass,
      title: `${key} answers ${status} for an id that does not exist`,
      summary: `${key} with an unknown ${family.idParameter} answered ${status}${what} (twice) instead of 404. Body: ${bodyExcerpt(run, answer)}`,
      impact: serverError
        ? "A routine miss crashes the handler."
        : "Clients and caches treat a missing resource as a success.",
      location: endpointLocation(family.read),
      severity: severityFor(defectClass),
      confidence: 0.85,
      discriminator: "unknown-id",
      exchanges: [
        { label: "unknown-id", exchange: answer },
        { label: "confirm", exchange: confirm },
      ],
      repro: {
        title: `${key} answers 404 for an unknown id`,
        steps,
        assertions: [
          {
            kind: "status_in",
            step: "missing",
            values: [400, 404, 410],
            message: "an unknown id must answer 404",
          },
        ],
      },
    }),
  ];
};

function documentsNotFound(operation: Operation): boolean {
  return Object.keys(operation.responses).some((status) => /^(404|410|4XX)$/i.test(status));
}

/** Another user gets 403 for an existing resource but 404 for a missing one: existence leaks. */
const existenceOracle: Oracle = async (run, factory, family, owner, other) => {
  if (!family.read || !family.idParameter || !other || family.read.security === "public") return [];
  const located = await factory.pathValuesFor(family.read, owner);
  if (!located) return [];
  const theirs = buildRequest(family.read, { seed: uniqueSeed(), pathValues: located.values });
  const missing = buildRequest(family.read, {
    seed: uniqueSeed(),
    pathValues: { ...located.values, [family.idParameter]: missingId(located.values[family.idParameter]!) },
  });
  const [existing, absent] = await Promise.all([
    sendPrepared(run, other.name, theirs),
    sendPrepared(run, other.name, missing),
  ]);
  if (!existing || !absent || statusOf(existing) !== 403 || statusOf(absent) !== 404) return [];
  const key = operationKey(family.read);
  const steps = located.resource ? stepsFor(located.resource, []) : [];
  const created = located.resource ? creationSteps(located.resource) : NO_CREATION;
  steps.push(
    stepFromPrepared("theirs", theirs, other.name, idStepsFor(theirs, created)),
    stepFromPrepared("missing", missing, other.name, idStepsFor(missing, created)),
  );
  return [
    buildFinding(run, {
      domain: "api",
      defectClass: "wrong-status",
      title: `${key} tells another user whether a resource exists (403 vs 404)`,
      summary: `As ${other.name}, ${key} answered 403 for ${owner ?? "another user"}'s resource and 404 for an id that does not exist, so ids can be enumerated.`,
      impact: "An attacker learns which ids exist (and how many) without being allowed to read them.",
      location: endpointLocation(family.read),
      severity: "low",
      confidence: 0.75,
      discriminator: "existence-oracle",
      exchanges: [
        { label: "other-users-resource", exchange: existing },
        { label: "missing-resource", exchange: absent },
      ],
      repro: {
        title: `${key} answers alike for another user's resource and a missing one`,
        steps,
        assertions: [
          {
            kind: "status_in",
            step: "theirs",
            values: [404],
            message: "another user's resource must look missing (404), like an unknown id",
          },
        ],
      },
    }),
  ];
};
