import type { Operation } from "../../map/system-map.ts";
import { candidateUsers, sendAsRightRole, sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, clonePrepared } from "../api/request-builder.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { Sent } from "./point-sender.ts";

// For probes that replace a whole body (an XML document, a serialised blob) rather than one field: the
// operation reached as the least privileged user it accepts, then any body sent in its place.

export interface OpenOperation {
  operation: Operation;
  user: string | undefined;
  /** The operation's valid request, path values filled. */
  prepared: PreparedRequest;
  /** The answer to the first body sent (the probe's own baseline document). */
  exchange: HttpExchange;
}

/** A prepared request carrying `body` as is, with its content type. */
export function withRawBody(prepared: PreparedRequest, body: string, contentType: string): PreparedRequest {
  const copy = clonePrepared(prepared);
  copy.rawBody = body;
  copy.body = undefined;
  copy.contentType = contentType;
  return copy;
}

/** Opens the operation by sending `baseline` (a harmless body of the probe's kind). */
export async function openOperation(
  run: ProbeRun,
  factory: ResourceFactory,
  operation: Operation,
  users: readonly ProfileUser[],
  baseline: (prepared: PreparedRequest) => PreparedRequest,
): Promise<OpenOperation | undefined> {
  const result = await sendAsRightRole(run, candidateUsers(users), async (user) => {
    const located = await factory.pathValuesFor(operation, user);
    if (!located) return undefined;
    return baseline(buildRequest(operation, { seed: uniqueSeed(), pathValues: located.values }));
  });
  if (!result) return undefined;
  return { operation, user: result.user, prepared: result.prepared, exchange: result.exchange };
}

export async function sendRequest(
  run: ProbeRun,
  open: OpenOperation,
  prepared: PreparedRequest,
): Promise<Sent | undefined> {
  const exchange = await sendPrepared(run, open.user, prepared);
  return exchange ? { prepared, exchange, landed: exchange } : undefined;
}
