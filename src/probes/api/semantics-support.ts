import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import { creationSteps, stepFromPrepared } from "../evidence/repro-steps.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { ResourceFamily } from "./operation-index.ts";
import { isSafeWrite } from "./operation-index.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { bodyKind, buildRequest } from "./request-builder.ts";
import type { CreatedResource } from "./resource-factory.ts";
import { type ResourceFactory, uniqueSeed } from "./resource-factory.ts";

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
    ...extra.map((step) => stepFromPrepared(step.name, step.prepared, step.user, created.idSteps)),
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
