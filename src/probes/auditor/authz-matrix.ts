import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { probeMassAssignment } from "../api/mass-assignment.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { selectOperations } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { buildRequest } from "../api/request-builder.ts";
import type { CreatedResource } from "../api/resource-factory.ts";
import { listItems, ResourceFactory, uniqueSeed } from "../api/resource-factory.ts";
import { isPersonFamily } from "../api/resource-harvest.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import { isSuccess } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { byPrivilege, isAdminLike, outsidersOf } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { checkAnonymousDisclosure } from "./access-disclosure.ts";
import { checkFunctionWrites } from "./access-function.ts";
import { checkNestedPages } from "./access-nested.ts";
import { checkCrossTenantNoOps } from "./access-noop.ts";
import { checkRead } from "./access-reads.ts";
import { objectSlots } from "./access-slots.ts";
import { checkObjectWrite } from "./access-writes.ts";
import { isAdminMarked } from "./admin-marked.ts";
import { group } from "./authz-findings.ts";
import type { Leak, Principal, Target } from "./authz-support.ts";
import { answer, targetOf } from "./authz-support.ts";
import { checkVertical } from "./authz-vertical.ts";
import { checkAnonymousCreate } from "./authz-writes.ts";
import { checkForgedTokens } from "./forged-tokens.ts";
import { carriesData, sameData } from "./same-data.ts";

export interface AuthzOptions {
  operation?: string;
  user?: string;
}

/**
 * authz_matrix: for resources one user owns (created by the probe, or found in that user's list when
 * nothing may be created), replays every item operation as a peer of the same role, a user of another
 * tenant, a lower role and anonymous, and compares what comes back with the owner's answer: the same data
 * is a leak, whatever the status says. Writes are judged by what the owner sees afterwards. Operations the
 * document marks `security: []` are public on purpose. Collection operations are checked anonymous-vs-
 * signed-in; every read lower-role-vs-privileged within one tenant (authz-vertical.ts); JWT sessions
 * against forged tokens (forged-tokens.ts).
 */
export async function authzMatrix(
  run: ProbeRun,
  options: AuthzOptions,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown> }> {
  const leaks: Leak[] = [];
  const stats = {
    owners: [] as string[],
    principals: [] as string[],
    item_checks: 0,
    write_checks: 0,
    collection_checks: 0,
    skipped: {} as Record<string, number>,
    vertical_leaks: 0,
    nested_page_leaks: 0,
    cross_tenant_noop_leaks: 0,
    function_write_leaks: 0,
    anonymous_disclosures: 0,
    mass_assignment: 0,
  };
  const assigned: EnvelopeDraft[] = [];
  const forged: EnvelopeDraft[] = [];
  const factory = new ResourceFactory(run);
  const selected = new Set(
    selectOperations(run.map, options.operation).filter((operation) => operation.security !== "public"),
  );
  const exhausted = await untilBudget(run, async () => {
    const users = await usableUsers(run, { peers: true });
    if (users.length === 0) {
      run.notes.push("no profile user could sign in: the matrix needs at least one signed-in user");
      return;
    }
    const owner =
      users.find((user) => user.name === options.user) ??
      users.find((user) => !isAdminLike(user.role) && !isThrowaway(run, user)) ??
      users[0]!;
    stats.owners.push(owner.name);
    const principals: Principal[] = [
      ...outsidersOf(owner, users),
      { user: undefined, relation: "anonymous" },
    ];
    stats.principals = principals.map(
      (principal) => `${principal.user?.name ?? "anonymous"} (${principal.relation})`,
    );
    const slots = objectSlots([...selected], factory.families);
    const readSlots = slots.filter((slot) => slot.operation.method.toUpperCase() === "GET");
    const writeSlots = slots.filter((slot) => slot.operation.method.toUpperCase() !== "GET");
    // Owners' objects first, then every read, then the writes: a write creates fresh objects (and
    // children under the owner's parents) that would change what a concurrent read compares.
    const records = new Map<ResourceFamily, Promise<CreatedResource | undefined>>();
    const ownObject = (family: ResourceFamily) => {
      let pending = records.get(family);
      if (!pending) {
        pending = family.item ? factory.ensure(family, owner.name) : factory.createRecord(family, owner.name);
        records.set(family, pending);
      }
      return pending;
    };
    const families = [...new Set(readSlots.map((slot) => slot.family))];
    const targets = new Map<ResourceFamily, Target>();
    await mapConcurrent(families, 6, async (family) => {
      const resource = factory.canCreate(family) ? await ownObject(family) : undefined;
      const target = resource
        ? targetOf(resource)
        : ((await discovered(factory, family, owner, users)) ?? (await harvested(factory, family, owner)));
      if (target) targets.set(family, target);
      else stats.skipped["no resource of the owner"] = (stats.skipped["no resource of the owner"] ?? 0) + 1;
    });
    await mapConcurrent(readSlots, 6, async (slot) => {
      const target = targets.get(slot.family);
      if (!target) return;
      if (
        pathParameterNames(slot.operation.path).some(
          (name) => target.values[name] === undefined && !(slot.place === "path" && name === slot.name),
        )
      )
        return;
      // Without a list to prove an item private, only another tenant or anonymous callers tell a leak; a
      // person's profile is commonly shown to every signed-in user (directories, assignees), so only
      // anonymous callers do.
      const asked = target.harvested
        ? principals.filter(
            ({ relation }) =>
              relation === "anonymous" || (relation === "other-tenant" && !isPersonFamily(slot.family)),
          )
        : principals;
      stats.item_checks += 1;
      leaks.push(...(await checkRead(run, factory, slot, owner, asked, target)));
    });
    if (run.target.writesAllowed) {
      const leakedToPeers = new Set(
        leaks
          .filter((leak) => leak.action === "read" && leak.principal.relation === "same-role")
          .map((leak) => factory.familyOf(leak.operation))
          .filter((family): family is ResourceFamily => family !== undefined),
      );
      const check = { run, factory, readSlots, leakedToPeers };
      await mapConcurrent(writeSlots, 4, async (slot) => {
        stats.write_checks += 1;
        leaks.push(...(await checkObjectWrite(check, slot, owner, principals)));
      });
      const functionLeaks = await checkFunctionWrites(check, [...selected], slots, users);
      stats.function_write_leaks = functionLeaks.length;
      leaks.push(...functionLeaks);
      // fuzz_operation tries mass assignment on documented creates; the ones only the source, a form or
      // traffic revealed are tried here.
      const undocumented = factory.families.filter(
        (family) => family.create && selected.has(family.create) && !family.create.documented,
      );
      await mapConcurrent(undocumented, 3, async (family) => {
        const found = await probeMassAssignment(run, factory, family, owner.name);
        stats.mass_assignment += found.length;
        assigned.push(...found);
      });
    }
    const collections = run.map.operations.filter(
      (operation) =>
        selected.has(operation) &&
        operation.method.toUpperCase() === "GET" &&
        pathParameterNames(operation.path).length === 0,
    );
    const ownIds = await ownIdsOf(factory, users);
    await mapConcurrent(collections, 8, async (operation) => {
      stats.collection_checks += 1;
      leaks.push(...(await checkCollection(run, operation, users, ownIds)));
    });
    // Every read without parameters, the documented-public ones above all: their answers show what anyone gets.
    const reads = selectOperations(run.map, options.operation).filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" && pathParameterNames(operation.path).length === 0,
    );
    const disclosed = await checkAnonymousDisclosure(run, factory, reads);
    stats.anonymous_disclosures = disclosed.length;
    leaks.push(...disclosed);
    const vertical = await checkVertical(run, factory, [...selected], users);
    stats.vertical_leaks = vertical.length;
    leaks.push(...vertical);
    forged.push(...(await checkForgedTokens(run, users, selected)));
    // The crawl-driven and no-op checks come last: they spend what the established checks leave.
    const nested = await checkNestedPages(run, [...selected], users);
    stats.nested_page_leaks = nested.length;
    leaks.push(...nested);
    if (run.target.writesAllowed) {
      const noOps = await checkCrossTenantNoOps(run, [...selected], users);
      stats.cross_tenant_noop_leaks = noOps.length;
      leaks.push(...noOps);
    }
    if (run.target.writesAllowed) {
      const creates = factory.families
        .map((family) => family.create)
        .filter(
          (operation): operation is Operation =>
            operation !== undefined && selected.has(operation) && operation.security === "required",
        );
      await mapConcurrent(creates, 6, async (operation) => {
        leaks.push(...(await checkAnonymousCreate(run, operation, owner)));
      });
    }
  });
  const candidates = [...group(run, leaks), ...forged, ...assigned];
  return {
    candidates,
    stats: {
      ...stats,
      leaks: leaks.length,
      created_resources: factory.created.length,
      budget_exhausted: exhausted,
    },
  };
}

function isThrowaway(run: ProbeRun, user: ProfileUser): boolean {
  return run.sessions.throwawayUsers().some((throwaway) => throwaway.name === user.name);
}

/** Without writes: an id the owner lists and an outsider does not. */
async function discovered(
  factory: ResourceFactory,
  family: ResourceFamily,
  owner: ProfileUser,
  users: ProfileUser[],
): Promise<Target | undefined> {
  const mine = await factory.discover(family, owner.name);
  if (!mine || mine.ids.length === 0) return undefined;
  const others = await Promise.all(
    outsidersOf(owner, users).map(({ user }) => factory.discover(family, user.name)),
  );
  const visibleToOthers = new Set(others.flatMap((other) => other?.ids ?? []));
  const id = mine.ids.find((candidate) => !visibleToOthers.has(candidate));
  if (id === undefined) return undefined;
  const values = family.idParameter
    ? { ...mine.pathValues, [family.idParameter]: id }
    : { ...mine.pathValues };
  return { values, id, markers: [] };
}

/** Last resort for item reads: an id the owner saw in its own answers (sign-in, "me", lists, references). */
async function harvested(
  factory: ResourceFactory,
  family: ResourceFamily,
  owner: ProfileUser,
): Promise<Target | undefined> {
  if (!family.idParameter || family.parentParameters.length > 0) return undefined;
  const [id] = await factory.harvestedIds(family, owner.name);
  return id === undefined
    ? undefined
    : { values: { [family.idParameter]: id }, id, markers: [], harvested: true };
}

/** The profile users' own ids, as their sign-in or "me" answers give them. */
async function ownIdsOf(factory: ResourceFactory, users: ProfileUser[]): Promise<Set<string>> {
  const ids = await Promise.all(users.map((user) => factory.harvest.ownId(user.name).catch(() => undefined)));
  return new Set(ids.filter((id): id is string => id !== undefined));
}

const OWNER_KEY =
  /^(owner|owner_?id|ownerId|user_?id|userId|created_?by|createdBy|author_?id|authorId|account_?id|accountId)$/;

/** Whether a list's items name one of the profile users as their owner: records that belong to someone. */
function ownedRecords(json: unknown, ownIds: ReadonlySet<string>): boolean {
  if (ownIds.size === 0) return false;
  return listItems(json).some(
    (item) =>
      item !== null &&
      typeof item === "object" &&
      Object.entries(item).some(
        ([key, value]) =>
          OWNER_KEY.test(key) &&
          (typeof value === "number" || typeof value === "string") &&
          ownIds.has(String(value)),
      ),
  );
}

/**
 * Anonymous against a signed-in user (lower roles against higher ones are checkVertical's): an operation
 * the document protects, or, with no document to say, whose items are records a profile user owns.
 */
async function checkCollection(
  run: ProbeRun,
  operation: Operation,
  users: ProfileUser[],
  ownIds: ReadonlySet<string>,
): Promise<Leak[]> {
  const lowest = byPrivilege(users)[0]!;
  const prepared = buildRequest(operation, { seed: uniqueSeed() });
  const leaks: Leak[] = [];
  const signedIn = await sendPrepared(run, lowest.name, prepared);
  const requiresAuthentication =
    operation.security === "required" ||
    isAdminMarked(run.map, operation) ||
    (operation.security === "unknown" && ownedRecords(signedIn?.response?.json, ownIds));
  if (
    requiresAuthentication &&
    signedIn &&
    isSuccess(signedIn) &&
    carriesData(signedIn.response?.json, signedIn.response?.body ?? "")
  ) {
    const anonymous = await sendPrepared(run, undefined, prepared);
    if (anonymous && isSuccess(anonymous) && sameData(answer(signedIn), answer(anonymous))) {
      leaks.push({
        operation,
        principal: { user: undefined, relation: "anonymous" },
        action: "read",
        ownerExchange: signedIn,
        otherExchange: anonymous,
        steps: [
          stepFromPrepared("owner", prepared, lowest.name),
          stepFromPrepared("other", prepared, undefined),
        ],
        owner: lowest.name,
        assertion: {
          kind: "status_in",
          step: "other",
          values: [401, 403],
          message: "anonymous callers must be refused",
        },
      });
    }
  }
  return leaks;
}
