import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { buildFinding } from "../evidence/finding.ts";
import { creationSteps, idStepsFor, NO_CREATION, stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ResourceFamily } from "./operation-index.ts";
import { isItemPath, operationKey } from "./operation-index.ts";
import { bodyExcerpt, endpointLocation, sendPrepared } from "./probe-support.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { clonePrepared } from "./request-builder.ts";
import type { CreatedResource, ResourceFactory } from "./resource-factory.ts";
import { idOf, uniqueSeed } from "./resource-factory.ts";
import { looksLikeErrorPayload, reseed } from "./value-tools.ts";

// Without a document nothing promises a creation's status, but an API promises by example: when its
// collections answer a creation with 201 Created (RFC 9110 §15.3.2), the one that answers 200 breaks the
// convention its clients were written against. The oracle is consistency, never a rule: an API whose
// creations all answer 200 is fine, and a POST that is an action rather than a creation does not count.

/** One creation the run sent: a POST to a collection and the answer it got. */
export interface CreationSighting {
  operation: Operation;
  user: string | undefined;
  prepared: PreparedRequest;
  exchange: HttpExchange;
  /** The resource the factory recorded for it, when the factory made it (for the repro's parents). */
  resource?: CreatedResource;
}

/** At least this many sibling creations must answer 201, and at least this many times as many as answer 200. */
const MIN_CREATED_SIBLINGS = 2;
const MAJORITY_RATIO = 2;

/**
 * Creations answered 200 where the API's other creations answer 201. Each reported creation is sent again
 * with fresh values: a second 200 carrying another new id confirms both that the status is stable and that
 * the operation creates (an upsert or an action answers the same object or none).
 */
export async function inconsistentCreationStatus(
  run: ProbeRun,
  factory: ResourceFactory,
  sightings: readonly CreationSighting[],
): Promise<EnvelopeDraft[]> {
  const creations = new Map<string, { sighting: CreationSighting; id: string }>();
  for (const sighting of [...sightings, ...factory.created.map(sightingOf)]) {
    const key = operationKey(sighting.operation);
    if (creations.has(key)) continue;
    const family = factory.families.find((candidate) => candidate.create === sighting.operation);
    const id = family ? createdId(sighting, family) : undefined;
    if (id !== undefined) creations.set(key, { sighting, id });
  }
  const all = [...creations.values()];
  const created = all.filter(({ sighting }) => statusOf(sighting.exchange) === 201);
  const plain = all.filter(({ sighting }) => statusOf(sighting.exchange) === 200);
  if (created.length < MIN_CREATED_SIBLINGS || created.length < MAJORITY_RATIO * plain.length) return [];
  const findings: EnvelopeDraft[] = [];
  for (const { sighting, id } of plain) {
    // Where a document lists the operation's statuses its promise decides (check_contract's status check).
    if (Object.keys(sighting.operation.responses).length > 0) continue;
    const again = withFreshValues(sighting.prepared);
    const replay = await sendPrepared(run, sighting.user, again);
    const family = factory.families.find((candidate) => candidate.create === sighting.operation);
    if (!family || !replay || statusOf(replay) !== 200) continue;
    const replayId = createdId({ ...sighting, prepared: again, exchange: replay }, family);
    if (replayId === undefined || replayId === id) continue;
    findings.push(
      finding(
        run,
        sighting,
        replay,
        created.map(({ sighting: sibling }) => sibling),
      ),
    );
  }
  return findings;
}

function sightingOf(resource: CreatedResource): CreationSighting {
  return {
    operation: resource.request.operation,
    user: resource.owner,
    prepared: resource.request,
    exchange: resource.exchange,
    resource,
  };
}

/**
 * The new object's id when the exchange is a JSON creation: a POST to a collection the API also reads
 * (a list, an item read, an update or a delete beside it), answered 200 or 201 with an object (or its one
 * wrapped object) that carries an id. Form posts that redirect, actions and sign-ins answer otherwise.
 */
function createdId(sighting: CreationSighting, family: ResourceFamily): string | undefined {
  const { operation, exchange } = sighting;
  if (operation.method.toUpperCase() !== "POST" || isItemPath(operation.path)) return undefined;
  if (!family.list && !family.read && !family.remove && family.updates.length === 0) return undefined;
  const response = exchange.response;
  if (!response || (response.status !== 200 && response.status !== 201)) return undefined;
  if (!response.contentType.includes("json")) return undefined;
  const json = response.json;
  if (!json || typeof json !== "object" || Array.isArray(json) || looksLikeErrorPayload(json))
    return undefined;
  const direct = idOf(json, family);
  if (direct !== undefined) return direct;
  const objects = Object.values(json).filter(
    (value) => value && typeof value === "object" && !Array.isArray(value),
  );
  return Object.keys(json).length === 1 && objects.length === 1 ? idOf(objects[0], family) : undefined;
}

/** The same creation with the generated part of its values renewed, so unique fields do not collide. */
function withFreshValues(prepared: PreparedRequest): PreparedRequest {
  const again = clonePrepared(prepared);
  const seed = uniqueSeed();
  again.body = reseed(again.body, prepared.seed, seed);
  again.query = reseed(again.query, prepared.seed, seed) as Record<string, string>;
  again.seed = seed;
  return again;
}

function finding(
  run: ProbeRun,
  sighting: CreationSighting,
  replay: HttpExchange,
  siblings: CreationSighting[],
): EnvelopeDraft {
  const key = operationKey(sighting.operation);
  const names = siblings.map((sibling) => operationKey(sibling.operation));
  // The resources the creation's path needs come first (a project for its tasks), then the creation.
  const created = sighting.resource ? creationSteps(sighting.resource) : NO_CREATION;
  const steps = [
    ...created.steps,
    stepFromPrepared("create", sighting.prepared, sighting.user, idStepsFor(sighting.prepared, created)),
  ];
  return buildFinding(run, {
    domain: "api",
    defectClass: "wrong-status",
    title: `${key} answers 200 to a creation where the API's other creations answer 201`,
    summary: `${key} created a new object and answered 200 (twice, each time with a new id), while ${names.length} other creations of this API answer 201 Created: ${names.slice(0, 6).join(", ")}. Body: ${bodyExcerpt(run, sighting.exchange, 160)}`,
    impact:
      "Clients written against the API's convention (201 and the new object) mistake the creation for another kind of answer.",
    location: endpointLocation(sighting.operation),
    severity: "low",
    confidence: 0.7,
    discriminator: "creation-status",
    exchanges: [
      { label: "creation", exchange: sighting.exchange },
      { label: "creation-again", exchange: replay },
      ...siblings.slice(0, 3).map((sibling, index) => ({
        label: `sibling-${index + 1}-answers-201`,
        exchange: sibling.exchange,
      })),
    ],
    notes: [`Creations answering 201: ${names.join(", ")}`],
    repro: {
      title: `${key} answers 201 Created like the API's other creations`,
      steps,
      assertions: [
        {
          kind: "status_in",
          step: "create",
          values: [201],
          message: `${key} creates an object: it must answer 201 like ${names[0]}`,
        },
      ],
    },
  });
}
