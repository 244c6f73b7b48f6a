import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest } from "../api/request-builder.ts";
import type { CreatedResource } from "../api/resource-factory.ts";
import { idOf, listItems, uniqueSeed } from "../api/resource-factory.ts";
import type { ReproAssertion, ReproStep } from "../evidence/failing-test.ts";
import { creationSteps, stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { Relation } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";

// Shared pieces of the authorization matrix: who is asked, what a leak records, and how a reproduction
// re-creates the owner's resource.

export type Principal =
  | { user: ProfileUser; relation: Relation }
  | { user: undefined; relation: "anonymous" };

export interface Leak {
  operation: Operation;
  principal: Principal;
  action: "read" | "update" | "delete" | "create";
  ownerExchange: HttpExchange;
  otherExchange: HttpExchange;
  confirmExchange?: HttpExchange;
  steps: ReproStep[];
  assertion: ReproAssertion;
  owner: string;
}

export function answer(exchange: HttpExchange): { json: unknown; text: string } {
  return { json: exchange.response?.json, text: exchange.response?.body ?? "" };
}

export interface Target {
  values: Record<string, string>;
  resource?: CreatedResource;
  markers: string[];
}

export function targetOf(resource: CreatedResource): Target {
  return { values: resource.pathValues, resource, markers: resource.markers };
}

export async function listedFor(
  run: ProbeRun,
  family: ResourceFamily,
  user: string | undefined,
  values: Record<string, string>,
  id: string,
): Promise<boolean> {
  if (!family.list) return false;
  const list = buildRequest(family.list, { seed: uniqueSeed(), pathValues: values });
  const exchange = await sendPrepared(run, user, list);
  return Boolean(
    exchange &&
      isSuccess(exchange) &&
      listItems(exchange.response?.json).some((item) => idOf(item, family) === id),
  );
}

export function reproFor(
  target: Target,
  extra: Array<{ name: string; prepared: PreparedRequest; user: string | undefined }>,
): { steps: ReproStep[]; markers: string[] } {
  const created = target.resource ? creationSteps(target.resource) : { steps: [], idSteps: {} };
  const seed = target.resource?.request.seed;
  const markers = target.markers.map((marker) => (seed ? marker.split(seed).join("{{unique}}") : marker));
  return {
    steps: [
      ...created.steps,
      ...extra.map((step) => stepFromPrepared(step.name, step.prepared, step.user, created.idSteps)),
    ],
    markers,
  };
}

/** A resource the outsider's own list shows is shared with them on purpose (a team's or tenant's). */
export function sharedWith(
  run: ProbeRun,
  family: ResourceFamily,
  principal: Principal,
  resource: CreatedResource,
): Promise<boolean> {
  if (!principal.user) return Promise.resolve(false);
  return listedFor(run, family, principal.user.name, resource.pathValues, resource.id);
}

export function firstPerRelation(principals: Principal[]): Principal[] {
  const seen = new Set<string>();
  return principals.filter((principal) => {
    if (seen.has(principal.relation)) return false;
    seen.add(principal.relation);
    return true;
  });
}
