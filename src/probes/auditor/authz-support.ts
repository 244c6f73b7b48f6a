import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { lastStaticSegment, nounOf } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest } from "../api/request-builder.ts";
import type { CreatedResource, ResourceFactory } from "../api/resource-factory.ts";
import { idOf, listItems, uniqueSeed } from "../api/resource-factory.ts";
import type { ReproAssertion, ReproStep } from "../evidence/failing-test.ts";
import { creationSteps, idStepsFor, NO_CREATION, stepFromPrepared } from "../evidence/repro-steps.ts";
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
  action: "read" | "update" | "delete" | "action" | "create";
  ownerExchange: HttpExchange;
  otherExchange: HttpExchange;
  confirmExchange?: HttpExchange;
  steps: ReproStep[];
  assertion: ReproAssertion;
  owner: string;
  /**
   * `gate`: a lower role's incomplete write reached the same validation as the privileged role's;
   * `disclosure`: an anonymous answer showed a record whose own read refuses anonymous callers.
   */
  technique?: "gate" | "disclosure";
}

export function answer(exchange: HttpExchange): { json: unknown; text: string } {
  return { json: exchange.response?.json, text: exchange.response?.body ?? "" };
}

export interface Target {
  values: Record<string, string>;
  /** The object's own id (also in `values` when an item path addresses it). */
  id?: string;
  resource?: CreatedResource;
  markers: string[];
  /** Found in the owner's own answers: nothing proves whether the owner's peers may see it. */
  harvested?: boolean;
}

export function targetOf(resource: CreatedResource): Target {
  return { values: resource.pathValues, id: resource.id, resource, markers: resource.markers };
}

const LIMIT_PARAMETER = /^(limit|per_?page|page_?size|pagesize|size|max|take|top)$/i;
const PAGE_PARAMETER = /^(page|page_?number|offset|skip|start)$/i;
const MAX_PAGES = 5;

/**
 * Whether `user`'s list shows the item: the largest page the list documents, and up to five pages when it
 * documents a page or offset parameter (a fresh item may sort after the first page).
 */
export async function listedFor(
  run: ProbeRun,
  family: ResourceFamily,
  user: string | undefined,
  values: Record<string, string>,
  id: string,
): Promise<boolean> {
  return (await listedEntry(run, family, user, values, id)) !== undefined;
}

/** The entry of `user`'s list that is the item (searched as listedFor does), undefined when none is. */
export async function listedEntry(
  run: ProbeRun,
  family: ResourceFamily,
  user: string | undefined,
  values: Record<string, string>,
  id: string,
): Promise<unknown> {
  if (!family.list) return undefined;
  const query = family.list.parameters.filter((parameter) => parameter.in === "query");
  const limit = query.find((parameter) => LIMIT_PARAMETER.test(parameter.name));
  const page = query.find((parameter) => PAGE_PARAMETER.test(parameter.name));
  const maximum = (limit?.schema as { maximum?: unknown } | undefined)?.maximum;
  const size = typeof maximum === "number" && maximum > 0 ? Math.min(maximum, 100) : 100;
  const byOffset = page ? /offset|skip|start/i.test(page.name) : false;
  const firstPage = (page?.schema as { minimum?: unknown } | undefined)?.minimum === 0 ? 0 : 1;
  for (let index = 0; index < (page ? MAX_PAGES : 1); index += 1) {
    const list = buildRequest(family.list, { seed: uniqueSeed(), pathValues: values });
    if (limit) list.query[limit.name] = String(size);
    if (page) list.query[page.name] = String(byOffset ? index * size : firstPage + index);
    const exchange = await sendPrepared(run, user, list);
    if (!exchange || !isSuccess(exchange)) return undefined;
    const items = listItems(exchange.response?.json);
    const entry = items.find((item) => idOf(item, family) === id);
    if (entry !== undefined) return entry;
    if (items.length === 0 || (limit && items.length < size)) return undefined;
  }
  return undefined;
}

export function reproFor(
  target: Target,
  extra: Array<{ name: string; prepared: PreparedRequest; user: string | undefined }>,
): { steps: ReproStep[]; markers: string[] } {
  const created = target.resource ? creationSteps(target.resource) : NO_CREATION;
  const seed = target.resource?.request.seed;
  const markers = target.markers.map((marker) => (seed ? marker.split(seed).join("{{unique}}") : marker));
  return {
    steps: [
      ...created.steps,
      ...extra.map((step) =>
        stepFromPrepared(step.name, step.prepared, step.user, idStepsFor(step.prepared, created)),
      ),
    ],
    markers,
  };
}

/**
 * Whether `user`'s own lists show the item, so it is shared with them on purpose (a team's or tenant's):
 * the family's list, the nested list it was created in (`/projects/{id}/tasks` for `/tasks/{id}`), or a
 * top-level list of the same name.
 */
export async function visibleTo(
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  user: string,
  target: Target,
  id: string,
  revealed: readonly string[] = [],
): Promise<boolean> {
  let listable = Boolean(family.list);
  const shows = (lister: ResourceFamily, values: Record<string, string>) =>
    showsShared(run, lister, user, values, id, revealed);
  if (await shows(family, target.values)) return true;
  const creator = factory.creatorOf(family);
  if (target.resource && creator && creator !== family && creator.list) {
    listable = true;
    if (await shows({ ...family, list: creator.list }, target.resource.request.pathValues)) return true;
  }
  const noun = nounOf(lastStaticSegment(family.collection) ?? "");
  for (const other of factory.families) {
    if (other === family || !other.list || other.parentParameters.length > 0) continue;
    if (nounOf(lastStaticSegment(other.collection) ?? "") !== noun) continue;
    listable = true;
    if (await shows({ ...family, list: other.list }, {})) return true;
  }
  // A child no list can show (a note on a card) is as shared as the parent it was made in; a list that
  // exists and leaves the item out is evidence it is private.
  const parent = target.resource?.parents.at(-1);
  if (!listable && parent)
    return visibleTo(run, factory, parent.family, user, targetOf(parent), parent.id, revealed);
  return false;
}

/**
 * Whether the list shows `user` the item as shared with them. An entry that carries every planted value
 * the user's read revealed shares it; one that leaves some out shares only a summary, and when anonymous
 * callers see that same entry it is a public directory (titles and owners of everyone's items), which
 * says nothing about who may read the item's private fields.
 */
async function showsShared(
  run: ProbeRun,
  lister: ResourceFamily,
  user: string,
  values: Record<string, string>,
  id: string,
  revealed: readonly string[],
): Promise<boolean> {
  const entry = await listedEntry(run, lister, user, values, id);
  if (entry === undefined) return false;
  const text = JSON.stringify(entry);
  if (revealed.every((value) => text.includes(JSON.stringify(value).slice(1, -1)))) return true;
  return (await listedEntry(run, lister, undefined, values, id)) === undefined;
}

/** A resource the outsider's own lists show is shared with them on purpose (a team's or tenant's). */
export function sharedWith(
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  principal: Principal,
  resource: CreatedResource,
): Promise<boolean> {
  if (!principal.user) return Promise.resolve(false);
  return visibleTo(run, factory, family, principal.user.name, targetOf(resource), resource.id);
}

export function firstPerRelation(principals: Principal[]): Principal[] {
  const seen = new Set<string>();
  return principals.filter((principal) => {
    if (seen.has(principal.relation)) return false;
    seen.add(principal.relation);
    return true;
  });
}
