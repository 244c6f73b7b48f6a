import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { isSafeWrite, selectOperations } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { buildRequest } from "../api/request-builder.ts";
import { ResourceFactory, uniqueSeed } from "../api/resource-factory.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import { isSuccess } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { untilBudget, usableUsers } from "../session/probe-run.ts";
import { byPrivilege, isAdminLike, outsidersOf } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { isAdminMarked } from "./admin-marked.ts";
import { group } from "./authz-findings.ts";
import type { Leak, Principal, Target } from "./authz-support.ts";
import { answer, reproFor, targetOf, visibleTo } from "./authz-support.ts";
import { checkVertical } from "./authz-vertical.ts";
import { checkAnonymousCreate, checkDelete, checkUpdate } from "./authz-writes.ts";
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
    item_checks: 0,
    collection_checks: 0,
    skipped: {} as Record<string, number>,
    vertical_leaks: 0,
  };
  const forged: EnvelopeDraft[] = [];
  const factory = new ResourceFactory(run);
  const selected = new Set(
    selectOperations(run.map, options.operation).filter((operation) => operation.security !== "public"),
  );
  const exhausted = await untilBudget(run, async () => {
    const users = await usableUsers(run);
    if (users.length === 0) {
      run.notes.push("no profile user could sign in: the matrix needs at least one signed-in user");
      return;
    }
    const owner =
      users.find((user) => user.name === options.user) ??
      users.find((user) => !isAdminLike(user.role)) ??
      users[0]!;
    stats.owners.push(owner.name);
    const principals: Principal[] = [
      ...outsidersOf(owner, users),
      { user: undefined, relation: "anonymous" },
    ];
    // Owners' resources first, then every read, then the writes: a write creates fresh resources (and
    // children under the owner's parents) that would change what a concurrent read compares.
    const checks = await mapConcurrent(
      factory.families.filter((family) => family.item),
      6,
      async (family) => {
        const reads = [
          family.read,
          ...family.children.filter((operation) => operation.method.toUpperCase() === "GET"),
        ].filter((operation): operation is Operation => operation !== undefined && selected.has(operation));
        const resource = factory.canCreate(family) ? await factory.ensure(family, owner.name) : undefined;
        const target = resource
          ? targetOf(resource)
          : ((await discovered(factory, family, owner, users)) ??
            (reads.length > 0 ? await harvested(factory, family, owner) : undefined));
        if (!target) {
          stats.skipped["no resource of the owner"] = (stats.skipped["no resource of the owner"] ?? 0) + 1;
          return undefined;
        }
        return { family, reads, resource, target };
      },
    );
    const ready = checks.filter((check) => check !== undefined);
    await mapConcurrent(ready, 6, async ({ family, reads, target }) => {
      // Without a list to prove an item private, only another tenant or anonymous callers tell a leak.
      const asked = target.harvested
        ? principals.filter(({ relation }) => relation === "other-tenant" || relation === "anonymous")
        : principals;
      for (const operation of reads) {
        if (pathParameterNames(operation.path).some((name) => target.values[name] === undefined)) continue;
        stats.item_checks += 1;
        leaks.push(...(await checkRead(run, factory, family, operation, owner, asked, target)));
      }
    });
    await mapConcurrent(ready, 6, async ({ family, resource }) => {
      if (!resource || !run.target.writesAllowed || !family.read) return;
      for (const update of family.updates.filter(
        (operation) => selected.has(operation) && isSafeWrite(operation),
      )) {
        leaks.push(...(await checkUpdate(run, factory, family, update, owner, principals)));
      }
      if (family.remove && selected.has(family.remove))
        leaks.push(...(await checkDelete(run, factory, family, family.remove, owner, principals)));
    });
    const collections = run.map.operations.filter(
      (operation) =>
        selected.has(operation) &&
        operation.method.toUpperCase() === "GET" &&
        pathParameterNames(operation.path).length === 0,
    );
    await mapConcurrent(collections, 8, async (operation) => {
      stats.collection_checks += 1;
      leaks.push(...(await checkCollection(run, operation, users)));
    });
    const vertical = await checkVertical(run, factory, [...selected], users);
    stats.vertical_leaks = vertical.length;
    leaks.push(...vertical);
    forged.push(...(await checkForgedTokens(run, users, selected)));
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
  const candidates = [...group(run, leaks), ...forged];
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

/** Without writes: an id the owner lists and an outsider does not. */
async function discovered(
  factory: ResourceFactory,
  family: ResourceFamily,
  owner: ProfileUser,
  users: ProfileUser[],
): Promise<Target | undefined> {
  const mine = await factory.discover(family, owner.name);
  if (!mine || mine.ids.length === 0 || !family.idParameter) return undefined;
  const others = await Promise.all(
    outsidersOf(owner, users).map(({ user }) => factory.discover(family, user.name)),
  );
  const visibleToOthers = new Set(others.flatMap((other) => other?.ids ?? []));
  const id = mine.ids.find((candidate) => !visibleToOthers.has(candidate));
  if (id === undefined) return undefined;
  return { values: { ...mine.pathValues, [family.idParameter]: id }, markers: [] };
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
    : { values: { [family.idParameter]: id }, markers: [], harvested: true };
}

async function checkRead(
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  operation: Operation,
  owner: ProfileUser,
  principals: Principal[],
  target: Target,
): Promise<Leak[]> {
  const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: target.values });
  const ownerExchange = await sendPrepared(run, owner.name, prepared);
  if (
    !ownerExchange ||
    !isSuccess(ownerExchange) ||
    !carriesData(ownerExchange.response?.json, ownerExchange.response?.body ?? "")
  )
    return [];
  const leaks: Leak[] = [];
  const id = family.idParameter ? target.values[family.idParameter] : undefined;
  await Promise.all(
    principals.map(async (principal) => {
      if (principal.relation === "anonymous" && operation.security === "public") return;
      const other = await sendPrepared(run, principal.user?.name, prepared);
      if (!other || !isSuccess(other) || !sameData(answer(ownerExchange), answer(other), target.markers))
        return;
      // Shared on purpose when the outsider's own list shows it too.
      if (
        principal.user &&
        id !== undefined &&
        (await visibleTo(run, factory, family, principal.user.name, target, id))
      )
        return;
      const confirm = await sendPrepared(run, principal.user?.name, prepared);
      if (
        !confirm ||
        !isSuccess(confirm) ||
        !sameData(answer(ownerExchange), answer(confirm), target.markers)
      )
        return;
      const { steps, markers } = reproFor(target, [
        { name: "owner", prepared, user: owner.name },
        { name: "other", prepared, user: principal.user?.name },
      ]);
      leaks.push({
        operation,
        principal,
        action: "read",
        ownerExchange,
        otherExchange: other,
        confirmExchange: confirm,
        steps,
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
    }),
  );
  return leaks;
}

/** Anonymous against a signed-in user (lower roles against higher ones are checkVertical's). */
async function checkCollection(run: ProbeRun, operation: Operation, users: ProfileUser[]): Promise<Leak[]> {
  const lowest = byPrivilege(users)[0]!;
  const prepared = buildRequest(operation, { seed: uniqueSeed() });
  const leaks: Leak[] = [];
  const signedIn = await sendPrepared(run, lowest.name, prepared);
  const requiresAuthentication = operation.security === "required" || isAdminMarked(run.map, operation);
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
