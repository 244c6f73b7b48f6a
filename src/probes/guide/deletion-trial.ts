import type { ResourceFamily } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { buildRequest } from "../api/request-builder.ts";
import {
  type CreatedResource,
  idOf,
  listItems,
  ResourceFactory,
  uniqueSeed,
} from "../api/resource-factory.ts";
import { itemRequest, unwrap, usable } from "../api/semantics-support.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { usableUsers } from "../session/probe-run.ts";

// Whether deleting really makes a record go away for good, tried on a record the probe creates itself and
// only on targets that allow writes: create it, read it, delete it, then read it again (404 or 410) and
// look for it in its list. Nothing the probe did not create is ever deleted.

export interface DeletionTrial {
  family: string;
  user: string | undefined;
  exchanges: Array<{ label: string; exchange: HttpExchange }>;
  /** Gone: the read answers 404/410 and the list (when there is one) no longer holds it. */
  gone: boolean;
  detail: string;
}

/** Families the probe may create in and delete from, preferring those the sentence names. */
function trialFamilies(factory: ResourceFactory, sentence: string): ResourceFamily[] {
  const lower = sentence.toLowerCase();
  const named = (family: ResourceFamily): boolean => {
    const last = family.collection.split("/").filter(Boolean).at(-1)?.toLowerCase() ?? "";
    const stem = last.replace(/ies$/, "y").replace(/s$/, "");
    return stem.length > 2 && lower.includes(stem);
  };
  return factory.families
    .filter((family) => family.read && usable(family.remove) && factory.canCreate(family))
    .sort((a, b) => Number(named(b)) - Number(named(a)));
}

export async function tryDeletion(run: ProbeRun, sentence: string): Promise<DeletionTrial | string> {
  if (!run.target.writesAllowed)
    return "the target does not allow writes: no record of the probe's own to delete";
  const factory = new ResourceFactory(run);
  const family = trialFamilies(factory, sentence)[0];
  if (!family?.read || !family.remove) return "no resource the probe can create, read and delete";
  const users = await usableUsers(run);
  const owner = users[0]?.name;
  const resource: CreatedResource | undefined = await factory.create(family, owner);
  if (!resource) return `could not create a record in ${family.collection}`;
  const exchanges: Array<{ label: string; exchange: HttpExchange }> = [
    { label: "created-by-the-probe", exchange: resource.exchange },
  ];
  const before = await sendPrepared(run, owner, itemRequest(family.read, resource));
  if (!before || !isSuccess(before)) return "the probe's own record could not be read back after creating it";
  const deleted = await sendPrepared(run, owner, itemRequest(family.remove, resource));
  if (!deleted || !isSuccess(deleted)) return `deleting the probe's own record answered ${statusOf(deleted)}`;
  exchanges.push({ label: "deleted-by-the-probe", exchange: deleted });
  const after = await sendPrepared(run, owner, itemRequest(family.read, resource));
  if (!after) return "the read after deleting was not sent";
  exchanges.push({ label: "read-after-delete", exchange: after });
  const readGone = statusOf(after) === 404 || statusOf(after) === 410;
  let listed = false;
  if (family.list) {
    const list = await sendPrepared(
      run,
      owner,
      buildRequest(family.list, { seed: uniqueSeed(), pathValues: resource.pathValues }),
    );
    if (list && isSuccess(list)) {
      exchanges.push({ label: "list-after-delete", exchange: list });
      listed = listItems(list.response?.json).some((item) => idOf(unwrap(item), family) === resource.id);
    }
  }
  return {
    family: family.collection,
    user: owner,
    exchanges,
    gone: readGone && !listed,
    detail: `read after delete answered ${statusOf(after)}${family.list ? `; ${listed ? "still" : "not"} in its list` : ""}`,
  };
}
