import type { ResourceFamily } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest } from "../api/request-builder.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import { isSuccess } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { ownParentValues } from "./access-parents.ts";
import type { ObjectSlot } from "./access-slots.ts";
import { fillSlot } from "./access-slots.ts";
import type { Leak, Principal, Target } from "./authz-support.ts";
import { answer, reproFor, visibleTo } from "./authz-support.ts";
import { carriesData, sameData } from "./same-data.ts";

// The read half of object-level authorization: an object of the owner's, asked for by another caller
// through every operation that takes its id (path, query or body), compared with what the owner gets.
// Same data is a leak whatever the status says; the outsider's own lists showing it means shared on purpose.

export function targetId(target: Target, family: ResourceFamily): string | undefined {
  return target.id ?? (family.idParameter ? target.values[family.idParameter] : undefined);
}

/** The request for the slot's operation with the target's id in place. */
export function slotRequest(slot: ObjectSlot, values: Record<string, string>, id: string): PreparedRequest {
  const prepared = buildRequest(slot.operation, { seed: uniqueSeed(), pathValues: values });
  fillSlot(prepared, slot, id);
  return prepared;
}

export async function checkRead(
  run: ProbeRun,
  factory: ResourceFactory,
  slot: ObjectSlot,
  owner: ProfileUser,
  principals: Principal[],
  target: Target,
): Promise<Leak[]> {
  const id = targetId(target, slot.family);
  if (id === undefined) return [];
  const prepared = slotRequest(slot, target.values, id);
  const ownerExchange = await sendPrepared(run, owner.name, prepared);
  if (
    !ownerExchange ||
    !isSuccess(ownerExchange) ||
    !carriesData(ownerExchange.response?.json, ownerExchange.response?.body ?? "")
  )
    return [];
  const reference = answer(ownerExchange);
  const leaks: Leak[] = [];
  let anonymousRead: Promise<boolean> | undefined;
  const refusedToAnonymous = () => {
    anonymousRead ??= sendPrepared(run, undefined, prepared).then(
      (exchange) =>
        exchange !== undefined &&
        (!isSuccess(exchange) || !sameData(reference, answer(exchange), target.markers)),
    );
    return anonymousRead;
  };
  await Promise.all(
    principals.map(async (principal) => {
      if (principal.relation === "anonymous" && slot.operation.security === "public") return;
      const variants = [prepared];
      if (principal.user) {
        const own = await ownParentValues(factory, slot, target.values, principal.user.name);
        if (own) variants.push(slotRequest(slot, own, id));
      }
      for (const variant of variants) {
        const other = await sendPrepared(run, principal.user?.name, variant);
        if (!other || !isSuccess(other) || !sameData(reference, answer(other), target.markers)) continue;
        // Shared on purpose when the outsider's own list shows it too.
        // What the read told the outsider beyond a public list's summary counts only for an item that
        // anonymous callers may not read: a public catalogue's items are shared with everyone.
        const revealed = (await refusedToAnonymous()) ? revealedValues(answer(other), target.markers) : [];
        if (
          principal.user &&
          (await visibleTo(run, factory, slot.family, principal.user.name, target, id, revealed))
        )
          return;
        const confirm = await sendPrepared(run, principal.user?.name, variant);
        if (!confirm || !isSuccess(confirm) || !sameData(reference, answer(confirm), target.markers))
          continue;
        const repro = reproFor(target, [
          { name: "owner", prepared, user: owner.name },
          { name: "other", prepared: variant, user: principal.user?.name },
        ]);
        const { steps } = repro;
        // Only markers the outsider's answer shows can prove the leak (an export may carry the record's
        // rows without its name); without one, the proof is the refusal that never came.
        const otherText = answer(other).text;
        const markers = repro.markers.filter((_, index) => otherText.includes(target.markers[index] ?? "\0"));
        leaks.push({
          operation: slot.operation,
          principal,
          action: "read",
          ownerExchange,
          otherExchange: other,
          confirmExchange: confirm,
          steps: withSlotIds(steps, slot, id, target.resource ? "created" : undefined),
          owner: owner.name,
          assertion:
            markers.length > 0
              ? {
                  kind: "denied_or_lacks",
                  step: "other",
                  texts: markers,
                  message: `${principal.user?.name ?? "anonymous"} must not read ${owner.name}'s data`,
                }
              : {
                  kind: "status_in",
                  step: "other",
                  values: [401, 403, 404],
                  message: `${principal.user?.name ?? "anonymous"} must be refused`,
                },
        });
        return;
      }
    }),
  );
  return leaks;
}

/**
 * The values a read told its caller: the planted markers it carries and its distinctive scalar strings
 * (a `secret`, a `note`), so a list entry can be checked for showing them all.
 */
export function revealedValues(read: { json: unknown; text: string }, markers: readonly string[]): string[] {
  const values = markers.filter((marker) => read.text.includes(marker));
  const visit = (value: unknown, depth: number) => {
    if (depth > 3 || values.length >= 40) return;
    if (typeof value === "string" && value.trim().length >= 3 && value.length <= 200) values.push(value);
    else if (Array.isArray(value)) for (const item of value.slice(0, 20)) visit(item, depth + 1);
    else if (value && typeof value === "object")
      for (const item of Object.values(value)) visit(item, depth + 1);
  };
  visit(read.json, 0);
  return [...new Set(values)];
}

/**
 * Reproduction steps address the object a step created: an id in a query or a body becomes
 * `{{created.id}}` like a path's (stepFromPrepared does the path's).
 */
export function withSlotIds(
  steps: ReproStep[],
  slot: ObjectSlot,
  id: string,
  createdStep: string | undefined,
): ReproStep[] {
  if (!createdStep || slot.place === "path") return steps;
  const placeholder = `{{${createdStep}.id}}`;
  const name = slot.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const value = id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return steps.map((step) => {
    if (step.name === createdStep || step.name.startsWith("parent")) return step;
    const path =
      slot.place === "query"
        ? step.path.replace(new RegExp(`([?&]${name}=)${value}(?=&|$)`), `$1${placeholder}`)
        : step.path;
    const body =
      slot.place === "body" && step.body
        ? step.body
            .replace(new RegExp(`("${name}"\\s*:\\s*)"${value}"`), `$1"${placeholder}"`)
            .replace(new RegExp(`("${name}"\\s*:\\s*)${value}(?=[,}\\s])`), `$1${placeholder}`)
            .replace(new RegExp(`((?:^|&)${name}=)${value}(?=&|$)`), `$1${placeholder}`)
        : step.body;
    return { ...step, path, body };
  });
}
