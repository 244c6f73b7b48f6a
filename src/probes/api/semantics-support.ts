import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import { creationSteps, idStepsFor, stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { ResourceFamily } from "./operation-index.ts";
import { isSafeWrite } from "./operation-index.ts";
import { sendPrepared } from "./probe-support.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { bodyKind, buildRequest } from "./request-builder.ts";
import type { CreatedResource } from "./resource-factory.ts";
import { idOf, listItems, type ResourceFactory, uniqueSeed } from "./resource-factory.ts";

// Shared pieces of the HTTP-semantics oracles.

export type Oracle = (
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  owner: string | undefined,
  other: ProfileUser | undefined,
) => Promise<EnvelopeDraft[]>;

export function itemRequest(
  operation: Operation,
  resource: CreatedResource,
  edit?: (prepared: PreparedRequest) => void,
): PreparedRequest {
  const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: resource.pathValues });
  edit?.(prepared);
  return prepared;
}

export function stepsFor(
  resource: CreatedResource,
  extra: Array<{ name: string; prepared: PreparedRequest; user: string | undefined }>,
): ReproStep[] {
  const created = creationSteps(resource);
  return [
    ...created.steps,
    ...extra.map((step) =>
      stepFromPrepared(step.name, step.prepared, step.user, idStepsFor(step.prepared, created)),
    ),
  ];
}

export function usable(operation: Operation | undefined): operation is Operation {
  return Boolean(operation && isSafeWrite(operation) && bodyKind(operation) !== "unsupported");
}

export const VOLATILE =
  /(updated|modified|changed|accessed|seen|synced)(_?at|_?on)?$|timestamp|version|etag|revision|^_?rev$|last_?login/i;

export function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !VOLATILE.test(key))
        .map(([key, inner]) => [key, stable(inner)]),
    );
  }
  return value;
}

export function unwrap(json: unknown): unknown {
  if (json && typeof json === "object" && !Array.isArray(json)) {
    const objects = Object.values(json).filter(
      (inner) => inner && typeof inner === "object" && !Array.isArray(inner),
    );
    const keys = Object.keys(json);
    if (objects.length === 1 && keys.length === 1) return objects[0];
  }
  return json;
}

export function missingId(id: string): string {
  if (/^\d+$/.test(id)) return String(Number(id) + 987_654_321);
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id)) return "00000000-0000-4000-8000-00000000d1e0";
  return `qaas-missing-${uniqueSeed()}`;
}

/** How an oracle looks at one record it created: its own read, or its row in the collection's list. */
export interface RecordReader {
  request: PreparedRequest;
  /** The record as the app shows it now (undefined when not shown), and the exchange that showed it. */
  look(): Promise<{ exchange: HttpExchange | undefined; record: unknown }>;
}

export function recordReader(
  run: ProbeRun,
  family: ResourceFamily,
  resource: CreatedResource,
  owner: string | undefined,
  pathValues: Record<string, string> = resource.pathValues,
): RecordReader | undefined {
  const operation = family.read ?? family.list;
  if (!operation) return undefined;
  const request = buildRequest(operation, { seed: uniqueSeed(), pathValues });
  return {
    request,
    async look() {
      const exchange = await sendPrepared(run, owner, request);
      if (!exchange || !isSuccess(exchange)) return { exchange, record: undefined };
      const json = exchange.response?.json;
      const record = family.read
        ? unwrap(json)
        : listItems(json).find((item) => idOf(item, family) === resource.id);
      return { exchange, record };
    },
  };
}

/**
 * A body for `operation` whose properties take the kind of value the record shows for them: where a schema
 * inferred from a handler says "string" but the app stores a number, a number is sent (what the app shows
 * of itself is the better witness). Strings and unknown properties keep the schema's value.
 */
export function bodyShapedLike(body: unknown, record: unknown): unknown {
  if (!body || typeof body !== "object" || Array.isArray(body)) return body;
  if (!record || typeof record !== "object" || Array.isArray(record)) return body;
  const shown = record as Record<string, unknown>;
  const shaped: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const [key, value] of Object.entries(shaped)) {
    const seen = shown[key];
    if (typeof seen === "number" && typeof value !== "number") shaped[key] = Number.isInteger(seen) ? 3 : 2.5;
    else if (typeof seen === "boolean" && typeof value !== "boolean") shaped[key] = !seen;
  }
  return shaped;
}

// Fields that hold a count or an amount, whatever a reader typed them as.
const NUMERIC_NAME =
  /^(quantity|qty|amount|count|total|price|cost|stock|units|number|balance|score|points|level|size|weight|seats|capacity)$|[_-](quantity|qty|amount|count|total|price|cost|stock|units)$|(?<=[a-z])(Quantity|Qty|Amount|Count|Total|Price|Cost|Stock|Units)$/;
const RECORD_ONLY = /^(id|_id|uuid|uid|owner_?id|org_?id|user_?id|created_?at|updated_?at|version|etag)$/i;

/**
 * A second body for a refused PUT: the record as read (its own scalar fields but ids and bookkeeping),
 * then the guessed body's fields, a quantity-like one sent as a number. Undefined when nothing changes.
 */
export function plausibleBody(body: unknown, shown: unknown): Record<string, unknown> | undefined {
  if (!body || typeof body !== "object" || Array.isArray(body)) return undefined;
  const record =
    shown && typeof shown === "object" && !Array.isArray(shown) ? (shown as Record<string, unknown>) : {};
  const plausible: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record))
    if (!RECORD_ONLY.test(key) && value !== null && typeof value !== "object") plausible[key] = value;
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value === "string" && NUMERIC_NAME.test(key)) plausible[key] = 3;
    else if (!(key in plausible) || typeof plausible[key] !== "number") plausible[key] = value;
  }
  return JSON.stringify(plausible) === JSON.stringify(body) ? undefined : plausible;
}
