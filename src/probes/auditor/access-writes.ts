import type { ResourceFamily } from "../api/operation-index.ts";
import { hasSegment, isSafeWrite } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { bodyKind, buildRequest, clonePrepared, requestSchema } from "../api/request-builder.ts";
import type { CreatedResource, ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isRedirect, isSuccess, statusOf } from "../http/http-types.ts";
import { chooseBranch, propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { ownParentValues } from "./access-parents.ts";
import { slotRequest, withSlotIds } from "./access-reads.ts";
import type { ObjectSlot } from "./access-slots.ts";
import { isIdName } from "./access-slots.ts";
import type { OwnerView, Sighting } from "./access-views.ts";
import { changedFields, ownerView, restlessFields } from "./access-views.ts";
import type { Leak, Principal } from "./authz-support.ts";
import { firstPerRelation, reproFor, sharedWith, targetOf } from "./authz-support.ts";

// The write half of object-level authorization, judged by effect: another caller sends an operation that
// takes the id of a fresh object of the owner's (an update, a delete, an action such as `/approve`, or a
// POST that only looks the object up), and the owner's own view decides what happened: gone (a delete),
// changed (an update or an action), or the caller's answer carrying the owner's planted values (a read).
// Only objects the probe created are ever addressed; nothing is restored because nothing else is touched.

const DANGEROUS =
  /^(logout|log-out|signout|sign-out|reset|reset-password|purge|drop|wipe|truncate|shutdown|restart|reboot|flush|seed|migrate|password|passwords|change-password|credentials|impersonate|rotate|bulk-delete|delete-all|import|restore|backup|transfer|pay|payout|charge|refund|send|email|notify|invite)$/i;

/** Whether a path names an operation no probe may send (sign-out, reset, payments, mail, imports). */
export function isDangerousPath(path: string): boolean {
  return hasSegment(path, DANGEROUS);
}

/**
 * Whether the slot's operation may be sent with one of the probe's own objects in it: never to a
 * dangerous path; a non-item PUT/PATCH/DELETE only because its query or body names that object.
 */
export function isSafeObjectWrite(slot: ObjectSlot): boolean {
  if (isDangerousPath(slot.operation.path)) return false;
  if (slot.place === "path") return isSafeWrite(slot.operation);
  return !slot.operation.graphql;
}

export interface WriteCheck {
  run: ProbeRun;
  factory: ResourceFactory;
  /** Read slots: `GET …?id=` views of a family that has no item read. */
  readSlots: readonly ObjectSlot[];
  /** Families whose item read the read check found open to a peer of the owner's role: not shared, leaking. */
  leakedToPeers?: ReadonlySet<ResourceFamily>;
}

/** Makes a fresh object for the slot's family as `user` (addressable by path or only by its id). */
export function freshObject(
  factory: ResourceFactory,
  slot: ObjectSlot,
  user: string | undefined,
): Promise<CreatedResource | undefined> {
  return slot.family.idParameter
    ? factory.create(slot.family, user)
    : factory.createRecord(slot.family, user);
}

export async function checkObjectWrite(
  check: WriteCheck,
  slot: ObjectSlot,
  owner: ProfileUser,
  principals: Principal[],
): Promise<Leak[]> {
  const { run, factory } = check;
  if (!run.target.writesAllowed || !isSafeObjectWrite(slot) || !factory.canCreate(slot.family)) return [];
  const leaks: Leak[] = [];
  for (const principal of firstPerRelation(principals)) {
    const resource = await freshObject(factory, slot, owner.name);
    if (!resource) return leaks;
    if (await sharedWith(run, factory, slot.family, principal, resource)) continue;
    if (
      principal.relation === "same-role" &&
      !check.leakedToPeers?.has(slot.family) &&
      (await readsItem(check, slot, resource, principal))
    )
      continue;
    const leak = await attemptOn(check, slot, resource, owner, principal);
    if (leak) leaks.push(leak);
  }
  return leaks;
}

/**
 * Whether a peer of the owner's own role reads the object itself. Then it is shared with them, whatever the
 * lists show, and their changes to it are the team's ordinary work, not a leak — unless the read check
 * found that very read a leak (the peer's lists do not show the object): then the read proves nothing
 * shared, and a handler without an owner check on its read rarely has one on its writes.
 */
async function readsItem(
  check: WriteCheck,
  slot: ObjectSlot,
  resource: CreatedResource,
  principal: Principal,
): Promise<boolean> {
  const read = check.factory.familyOf(slot.operation)?.read;
  const idParameter = slot.family.idParameter;
  if (!read || !principal.user || !idParameter || resource.id === undefined) return false;
  const values = { ...resource.pathValues, [idParameter]: resource.id };
  const prepared = buildRequest(read, { seed: uniqueSeed(), pathValues: values });
  const exchange = await sendPrepared(check.run, principal.user.name, prepared);
  if (!exchange || !isSuccess(exchange)) return false;
  const json = exchange.response?.json as Record<string, unknown> | undefined;
  const wrapped = json?.data as Record<string, unknown> | undefined;
  const id = json?.id ?? (wrapped && typeof wrapped === "object" ? wrapped.id : undefined);
  return id !== undefined && String(id) === resource.id;
}

export interface Effect {
  action: Leak["action"];
  attempt: HttpExchange;
  prepared: PreparedRequest;
  after: Sighting;
  confirm?: HttpExchange;
  changed: string[];
  marker?: string;
  view: OwnerView;
}

/**
 * One caller's attempt on one object of `owner`'s: with the owner's path, then (nested) with the caller's
 * own parents. Answers the leak the owner's view proves, if any.
 */
async function attemptOn(
  check: WriteCheck,
  slot: ObjectSlot,
  resource: CreatedResource,
  owner: ProfileUser,
  principal: Principal,
): Promise<Leak | undefined> {
  const { factory } = check;
  const variants = [resource.pathValues];
  if (principal.user) {
    const own = await ownParentValues(factory, slot, resource.pathValues, principal.user.name);
    if (own) variants.push(own);
  }
  for (const values of variants) {
    const effect = await effectOf(check, slot, resource, owner.name, principal.user?.name, values);
    if (!effect) continue;
    return leakOf(slot, resource, owner, principal, effect);
  }
  return undefined;
}

/**
 * Sends the slot's operation on `resource` as `actor` and answers what the owner's view shows it did;
 * undefined when it was refused or nothing changed. Exported for the function-level check.
 */
export async function effectOf(
  check: WriteCheck,
  slot: ObjectSlot,
  resource: CreatedResource,
  owner: string | undefined,
  actor: string | undefined,
  values: Record<string, string>,
): Promise<Effect | undefined> {
  const { run, factory } = check;
  const view = ownerView(run, factory, resource, check.readSlots);
  const first = view ? await view.look(owner) : undefined;
  const second = view && first?.state === "present" ? await view.look(owner) : undefined;
  const marker = `qaas-authz-${uniqueSeed()}`;
  const prepared = withMarker(slotRequest(slot, values, resource.id), slot, marker);
  let attempt = await sendPrepared(run, actor, prepared);
  if (attempt && slot.place === "body" && (statusOf(attempt) === 400 || statusOf(attempt) === 422)) {
    // The id's JSON type was a guess (the schema did not say): the other type once.
    const flipped = flipBodyId(prepared, slot);
    if (flipped) {
      const retried = await sendPrepared(run, actor, flipped);
      if (retried && isSuccess(retried)) {
        attempt = retried;
        Object.assign(prepared, flipped);
      }
    }
  }
  if (attempt && (statusOf(attempt) === 400 || statusOf(attempt) === 422)) {
    // A body inferred from a handler may guess a field's type wrong: text in every numeric field once.
    const retyped = asText(prepared, slot, marker);
    if (retyped) {
      const retried = await sendPrepared(run, actor, retyped);
      if (retried) {
        attempt = retried;
        Object.assign(prepared, retyped);
      }
    }
  }
  // A form's action answers with a redirect (post/redirect/get) as often as with a 2xx; the owner's view
  // judges either way.
  if (!attempt || !(isSuccess(attempt) || isRedirect(attempt))) return undefined;
  if (view && first?.state === "present" && second?.state === "present") {
    const after = await view.look(owner);
    if (after?.state === "absent") {
      const again = await view.look(owner);
      if (again?.state === "absent") return { action: "delete", attempt, prepared, after, changed: [], view };
    } else if (after?.state === "present") {
      const changed = changedFields(second.item, after.item, restlessFields(first.item, second.item));
      const planted = JSON.stringify(after.item ?? "").includes(marker);
      if (changed.length > 0 || planted) {
        const method = slot.operation.method.toUpperCase();
        const action = method === "PUT" || method === "PATCH" || planted ? "update" : "action";
        return { action, attempt, prepared, after, changed, marker: planted ? marker : undefined, view };
      }
    }
  }
  // Nothing changed for the owner: a POST that only looks the object up still leaks what it shows.
  const markers = resource.markers;
  if (markers.length === 0) return undefined;
  if (!shows(attempt, markers)) return undefined;
  const confirm = await sendPrepared(run, actor, prepared);
  if (!confirm || !isSuccess(confirm) || !shows(confirm, markers)) return undefined;
  return {
    action: "read",
    attempt,
    prepared,
    confirm,
    changed: [],
    view: view ?? { operation: slot.operation, look: async () => undefined },
    after: { state: "present", exchange: attempt, prepared },
  };
}

/** Whether an answer carries a value the owner planted (unique, so only the owner's object holds it). */
function shows(exchange: HttpExchange, markers: readonly string[]): boolean {
  const text = exchange.response?.body ?? "";
  return markers.some((marker) => marker.length >= 6 && text.includes(marker));
}

/** Free-text fields of the body (not ids, enums or formats) carry a marker the owner's view may show. */
function withMarker(prepared: PreparedRequest, slot: ObjectSlot, marker: string): PreparedRequest {
  const kind = bodyKind(slot.operation);
  if (kind !== "json" && kind !== "form") return prepared;
  const schema = requestSchema(slot.operation);
  if (!schema || !prepared.body || typeof prepared.body !== "object" || Array.isArray(prepared.body))
    return prepared;
  const body = { ...(prepared.body as Record<string, unknown>) };
  for (const [name, property] of Object.entries(propertiesOf(chooseBranch(schema)))) {
    const chosen = chooseBranch(property);
    if (name === slot.name || isIdName(name) || !(name in body)) continue;
    if (schemaType(chosen) !== "string" || chosen.enum || chosen.format || chosen.pattern) continue;
    const max = typeof chosen.maxLength === "number" ? chosen.maxLength : 80;
    if (max < marker.length) continue;
    body[name] = marker;
  }
  prepared.body = body;
  return prepared;
}

function asText(prepared: PreparedRequest, slot: ObjectSlot, marker: string): PreparedRequest | undefined {
  const body = prepared.body;
  if (!body || typeof body !== "object" || Array.isArray(body)) return undefined;
  const fields = Object.entries(body as Record<string, unknown>).filter(
    ([name, value]) => name !== slot.name && !isIdName(name) && typeof value === "number",
  );
  if (fields.length === 0) return undefined;
  const copy = clonePrepared(prepared);
  copy.body = { ...(body as Record<string, unknown>) };
  for (const [name] of fields) (copy.body as Record<string, unknown>)[name] = marker;
  return copy;
}

function flipBodyId(prepared: PreparedRequest, slot: ObjectSlot): PreparedRequest | undefined {
  const body = prepared.body as Record<string, unknown> | undefined;
  const value = body?.[slot.name];
  if (value === undefined) return undefined;
  const copy = clonePrepared(prepared);
  const flipped =
    typeof value === "number" ? String(value) : /^-?\d+$/.test(String(value)) ? Number(value) : undefined;
  if (flipped === undefined) return undefined;
  copy.body = { ...(copy.body as Record<string, unknown>), [slot.name]: flipped };
  return copy;
}

function leakOf(
  slot: ObjectSlot,
  resource: CreatedResource,
  owner: ProfileUser,
  principal: Principal,
  effect: Effect,
): Leak {
  const who = principal.user?.name ?? "anonymous";
  const { steps, markers } = reproFor(targetOf(resource), [
    { name: "other", prepared: effect.prepared, user: principal.user?.name },
    { name: "owner", prepared: effect.after.prepared, user: owner.name },
  ]);
  const withIds = withSlotIds(steps, slot, resource.id, "created").map((step) =>
    step.name === "other" && step.body && effect.marker
      ? { ...step, body: step.body.split(effect.marker).join("qaas-authz-{{unique}}") }
      : step,
  );
  const verb =
    effect.action === "delete"
      ? "delete"
      : effect.action === "read"
        ? "read"
        : effect.action === "update"
          ? "change"
          : `act on (${effect.changed.slice(0, 3).join(", ") || "state"} changed)`;
  return {
    operation: slot.operation,
    principal,
    action: effect.action,
    ownerExchange: effect.after.exchange,
    otherExchange: effect.attempt,
    confirmExchange: effect.confirm,
    steps: withIds,
    owner: owner.name,
    assertion:
      effect.action === "read" && markers.length > 0
        ? {
            kind: "denied_or_lacks",
            step: "other",
            texts: markers,
            message: `${who} must not read ${owner.name}'s data`,
          }
        : {
            kind: "status_in",
            step: "other",
            values: [401, 403, 404],
            message: `${who} must not ${verb} ${owner.name}'s resource`,
          },
  };
}
