import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation, isSafeWrite } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { bodyKind, buildRequest } from "../api/request-builder.ts";
import { markersIn, uniqueSeed } from "../api/resource-factory.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { isSuccess } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { Leak } from "./authz-support.ts";

// An anonymous caller creating through a protected create operation (writes on existing objects are
// access-writes.ts').

/**
 * A create operation the document protects, tried anonymously with a valid body: a 2xx whose answer
 * carries a new id and the values sent is a write nobody authenticated. Sign-up and sign-in are exempt.
 */
export async function checkAnonymousCreate(
  run: ProbeRun,
  operation: Operation,
  owner: ProfileUser,
): Promise<Leak[]> {
  if (isAuthOperation(operation) || !isSafeWrite(operation) || bodyKind(operation) === "unsupported")
    return [];
  if (pathParameterNames(operation.path).length > 0) return [];
  const prepared = buildRequest(operation, { seed: uniqueSeed() });
  const markers = markerValuesOf(prepared.body, prepared.seed);
  if (markers.length === 0) return [];
  const anonymous = await sendPrepared(run, undefined, prepared);
  if (!anonymous || !isSuccess(anonymous)) return [];
  const json = anonymous.response?.json;
  const hasId = json !== undefined && JSON.stringify(json).match(/"(id|_id|uuid)"\s*:/) !== null;
  if (!hasId || !markers.some((marker) => (anonymous.response?.body ?? "").includes(marker))) return [];
  const step = stepFromPrepared("other", prepared, undefined);
  return [
    {
      operation,
      principal: { user: undefined, relation: "anonymous" },
      action: "create",
      ownerExchange: anonymous,
      otherExchange: anonymous,
      steps: [step],
      owner: owner.name,
      assertion: {
        kind: "status_in",
        step: "other",
        values: [401, 403],
        message: "anonymous callers must not create resources",
      },
    },
  ];
}

function markerValuesOf(body: unknown, seed: string | undefined): string[] {
  return seed ? markersIn(body, seed) : [];
}
