import type { Operation, SystemMap } from "../../map/system-map.ts";
import { hasSegment, isAuthOperation } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { buildRequest, requestSchema } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import { chooseBranch, requiredOf } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { ObjectSlot } from "./access-slots.ts";
import type { WriteCheck } from "./access-writes.ts";
import { effectOf, freshObject, isSafeObjectWrite } from "./access-writes.ts";
import { isAdminMarked } from "./admin-marked.ts";
import type { Leak } from "./authz-support.ts";
import { reproFor, targetOf } from "./authz-support.ts";
import type { VerticalPair } from "./authz-vertical.ts";
import { verticalPairs } from "./authz-vertical.ts";

// Function-level authorization on operations that change something (OWASP API5): an operation meant for a
// privileged role (marked so by its path, its document, or a crawl that reached it only as that role),
// performed by a lower role of the same tenant. On an object, the effect decides: the privileged role's
// call changes a fresh object of the probe's, and the lower role's call changes another one the same way.
// Without an object (site settings) nothing may be written, so the probe asks what the gate lets through:
// a body the document says is incomplete is stopped with 401/403 for anonymous callers, reaches the
// handler's validation for the privileged role, and reaches the very same validation for the lower role.

/** Whether the operation is evidently for privileged roles: marked, or offered only to them by the crawl. */
export function isPrivilegedOperation(map: SystemMap, operation: Operation, pair: VerticalPair): boolean {
  if (isAdminMarked(map, operation)) return true;
  const roles = operation.roles?.map((role) => role.toLowerCase());
  if (!roles) return false;
  return (
    roles.includes(pair.privileged.role.toLowerCase()) &&
    !roles.includes(pair.lower.role.toLowerCase()) &&
    !roles.includes("anonymous")
  );
}

export async function checkFunctionWrites(
  check: WriteCheck,
  operations: readonly Operation[],
  slots: readonly ObjectSlot[],
  users: readonly ProfileUser[],
): Promise<Leak[]> {
  const { run } = check;
  const [pair] = verticalPairs(users);
  if (!pair || !run.target.writesAllowed) return [];
  const writes = operations.filter(
    (operation) =>
      operation.method.toUpperCase() !== "GET" &&
      operation.security !== "public" &&
      !isAuthOperation(operation) &&
      !operation.graphql &&
      isPrivilegedOperation(run.map, operation, pair),
  );
  const leaks: Leak[] = [];
  await mapConcurrent(writes, 3, async (operation) => {
    const slot = slots.find((candidate) => candidate.operation === operation);
    const leak = slot
      ? await onObject(check, slot, pair)
      : pathParameterNames(operation.path).length === 0
        ? await throughTheGate(run, operation, pair)
        : undefined;
    if (leak) leaks.push(leak);
  });
  return leaks;
}

/**
 * The privileged role acts on one fresh object, the lower role on another (both the lower role's when it
 * may create them, so nothing crosses an owner's line); the same kind of change is a finding.
 */
async function onObject(check: WriteCheck, slot: ObjectSlot, pair: VerticalPair): Promise<Leak | undefined> {
  const { factory } = check;
  if (!isSafeObjectWrite(slot) || !factory.canCreate(slot.family)) return undefined;
  // The lower role's own objects when it may create them, so its call touches nothing of anyone else's.
  let creator = pair.lower.name;
  let reference = await freshObject(factory, slot, creator);
  if (!reference) {
    creator = pair.privileged.name;
    reference = await freshObject(factory, slot, creator);
  }
  if (!reference) return undefined;
  const privileged = await effectOf(
    check,
    slot,
    reference,
    creator,
    pair.privileged.name,
    reference.pathValues,
  );
  if (!privileged || privileged.action === "read") return undefined;
  const resource = await freshObject(factory, slot, creator);
  if (!resource) return undefined;
  const lower = await effectOf(check, slot, resource, creator, pair.lower.name, resource.pathValues);
  if (!lower || lower.action !== privileged.action) return undefined;
  const { steps } = reproFor(targetOf(resource), [
    { name: "other", prepared: lower.prepared, user: pair.lower.name },
  ]);
  return {
    operation: slot.operation,
    principal: { user: pair.lower, relation: "lower-role" },
    action: lower.action,
    ownerExchange: privileged.attempt,
    otherExchange: lower.attempt,
    confirmExchange: lower.after.exchange,
    steps,
    owner: pair.privileged.name,
    assertion: {
      kind: "status_in",
      step: "other",
      values: [401, 403, 404],
      message: `${pair.lower.name} (${pair.lower.role}) must not reach an operation of ${pair.privileged.role}s`,
    },
  };
}

/**
 * A write with no object to address: only a body the document says is incomplete is ever sent, and only
 * until someone is refused. Anonymous must be stopped at the gate (401/403) for the comparison to mean
 * anything; the lower role's answer equal to the privileged role's validation answer is the finding.
 */
async function throughTheGate(
  run: ProbeRun,
  operation: Operation,
  pair: VerticalPair,
): Promise<Leak | undefined> {
  const schema = requestSchema(operation);
  if (!schema || requiredOf(chooseBranch(schema)).length === 0) return undefined;
  if (hasSegment(operation.path, /^(logout|signout|sign-out)$/i)) return undefined;
  const prepared = buildRequest(operation, { seed: uniqueSeed() });
  prepared.body = {};
  prepared.contentType = "application/json";
  const anonymous = await sendPrepared(run, undefined, prepared);
  if (!anonymous || (statusOf(anonymous) !== 401 && statusOf(anonymous) !== 403)) return undefined;
  const lower = await sendPrepared(run, pair.lower.name, prepared);
  if (!lower || !isValidationAnswer(lower)) return undefined;
  const privileged = await sendPrepared(run, pair.privileged.name, prepared);
  if (!privileged || !isValidationAnswer(privileged) || !sameAnswer(lower, privileged)) return undefined;
  const confirm = await sendPrepared(run, pair.lower.name, prepared);
  if (!confirm || !sameAnswer(confirm, privileged)) return undefined;
  // Many handlers validate before they check the role, so the gate alone only suggests a leak. A create
  // settles it: a valid body the privileged role may send, sent by the lower role, makes a record of the
  // run's own or is refused.
  if (operation.method.toUpperCase() === "POST") {
    const created = await byValidCreate(run, operation, pair);
    if (created === "refused") return undefined;
    if (created) return created;
  }
  return lowerRoleLeak(operation, pair, {
    action: "update",
    ownerExchange: privileged,
    otherExchange: lower,
    confirmExchange: anonymous,
    steps: [
      stepFromPrepared("anonymous", prepared, undefined),
      stepFromPrepared("owner", prepared, pair.privileged.name),
      stepFromPrepared("other", prepared, pair.lower.name),
    ],
    refusals: [401, 403],
    message: "must be refused before the handler, like anonymous callers",
    technique: "gate",
  });
}

/** A lower role of the pair reached `operation`; the generated test expects one of `refusals`. */
function lowerRoleLeak(
  operation: Operation,
  pair: VerticalPair,
  seen: Pick<
    Leak,
    "action" | "ownerExchange" | "otherExchange" | "confirmExchange" | "steps" | "technique"
  > & {
    refusals: number[];
    message: string;
  },
): Leak {
  const { refusals, message, ...leak } = seen;
  return {
    ...leak,
    operation,
    principal: { user: pair.lower, relation: "lower-role" },
    owner: pair.privileged.name,
    assertion: {
      kind: "status_in",
      step: "other",
      values: refusals,
      message: `${pair.lower.name} (${pair.lower.role}) ${message}`,
    },
  };
}

/**
 * The privileged role creates with a valid body, then the lower role with a fresh one: a lower-role record
 * is the leak, a refusal clears the gate's suspicion; undefined when no valid body could be made.
 */
async function byValidCreate(
  run: ProbeRun,
  operation: Operation,
  pair: VerticalPair,
): Promise<Leak | "refused" | undefined> {
  const valid = buildRequest(operation, { seed: uniqueSeed() });
  const privileged = await sendPrepared(run, pair.privileged.name, valid);
  if (!privileged || !isSuccess(privileged)) return undefined;
  const own = buildRequest(operation, { seed: uniqueSeed() });
  const lower = await sendPrepared(run, pair.lower.name, own);
  if (!lower) return undefined;
  if (!isSuccess(lower)) return "refused";
  return lowerRoleLeak(operation, pair, {
    action: "create",
    ownerExchange: privileged,
    otherExchange: lower,
    confirmExchange: lower,
    steps: [
      stepFromPrepared("owner", valid, pair.privileged.name),
      stepFromPrepared("other", own, pair.lower.name),
    ],
    refusals: [401, 403, 404],
    message: `must not create through an operation of ${pair.privileged.role}s`,
  });
}

function isValidationAnswer(exchange: HttpExchange): boolean {
  const status = statusOf(exchange);
  return status === 400 || status === 422;
}

function sameAnswer(a: HttpExchange, b: HttpExchange): boolean {
  return statusOf(a) === statusOf(b) && (a.response?.body ?? "").trim() === (b.response?.body ?? "").trim();
}
