import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest } from "../api/request-builder.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { byPrivilege, roleRank } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { isAdminMarked } from "./admin-marked.ts";
import type { Leak } from "./authz-support.ts";
import { answer } from "./authz-support.ts";
import { carriesData, sameData } from "./same-data.ts";

// The vertical half of the matrix: an operation meant for the privileged users of a tenant, reached by a
// lower role of the SAME tenant with the same data. A list every member may see is not a finding, so the
// operation must also be evidently privileged: an admin word in its path, tags, id or summary; a 403 the
// document lists for it; or a sibling under the same path prefix that refuses the lower role.

export interface VerticalPair {
  privileged: ProfileUser;
  lower: ProfileUser;
}

/**
 * One pair per tenant: its most privileged user and its least privileged one (a tenant-less admin pairs
 * with any tenant). Users of another tenant are never paired: their data differs for another reason.
 */
export function verticalPairs(users: readonly ProfileUser[]): VerticalPair[] {
  const ranked = byPrivilege(users);
  const pairs: VerticalPair[] = [];
  const tenants = [...new Set(ranked.map((user) => user.tenant))];
  for (const tenant of tenants) {
    if (tenant === undefined) continue;
    const inTenant = ranked.filter((user) => user.tenant === tenant);
    const lower = inTenant[0];
    if (!lower) continue;
    const privileged =
      [...inTenant].reverse().find((user) => roleRank(user.role) > roleRank(lower.role)) ??
      [...ranked]
        .reverse()
        .find((user) => user.tenant === undefined && roleRank(user.role) > roleRank(lower.role));
    if (privileged) pairs.push({ privileged, lower });
  }
  if (pairs.length === 0 && tenants.every((tenant) => tenant === undefined) && ranked.length > 1) {
    const lower = ranked[0]!;
    const privileged = ranked[ranked.length - 1]!;
    if (roleRank(privileged.role) > roleRank(lower.role)) pairs.push({ privileged, lower });
  }
  return pairs.slice(0, 2);
}

interface Observation {
  operation: Operation;
  pair: VerticalPair;
  prepared: PreparedRequest;
  privileged: HttpExchange;
  lower: HttpExchange;
  same: boolean;
  refused: boolean;
}

/** Reads (collections, and items under admin-marked paths) as each pair; leaks where the lower role matches. */
export async function checkVertical(
  run: ProbeRun,
  factory: ResourceFactory,
  operations: readonly Operation[],
  users: readonly ProfileUser[],
): Promise<Leak[]> {
  const pairs = verticalPairs(users);
  if (pairs.length === 0) return [];
  const reads = operations.filter(
    (operation) =>
      operation.method.toUpperCase() === "GET" &&
      operation.security !== "public" &&
      !isAuthOperation(operation) &&
      (pathParameterNames(operation.path).length === 0 || isAdminMarked(run.map, operation)),
  );
  const observations: Observation[] = [];
  await mapConcurrent(reads, 6, async (operation) => {
    for (const pair of pairs) {
      const observed = await observe(run, factory, operation, pair);
      if (observed) {
        observations.push(observed);
        if (observed.same) break;
      }
    }
  });
  const paths = run.map.operations.map((operation) => toTemplateForm(operation.path));
  const refusedPrefixes = new Set(
    observations.filter((observed) => observed.refused).map((observed) => prefixOf(observed.operation.path)),
  );
  const leaks: Leak[] = [];
  for (const observed of observations.filter((candidate) => candidate.same)) {
    const { operation, pair } = observed;
    const prefix = prefixOf(operation.path);
    const privileged =
      isAdminMarked(run.map, operation) ||
      (pathParameterNames(operation.path).length === 0 && documentsForbidden(operation)) ||
      (refusedPrefixes.has(prefix) && isArea(prefix, paths));
    if (!privileged) continue;
    // Both again at once: data others create meanwhile must not decide the comparison.
    const [again, confirm] = await Promise.all([
      sendPrepared(run, pair.privileged.name, observed.prepared),
      sendPrepared(run, pair.lower.name, observed.prepared),
    ]);
    if (!again || !confirm || !isSuccess(again) || !isSuccess(confirm)) continue;
    if (!sameData(answer(again), answer(confirm))) continue;
    leaks.push({
      operation,
      principal: { user: pair.lower, relation: "lower-role" },
      action: "read",
      ownerExchange: observed.privileged,
      otherExchange: observed.lower,
      confirmExchange: confirm,
      steps: [
        stepFromPrepared("owner", observed.prepared, pair.privileged.name),
        stepFromPrepared("other", observed.prepared, pair.lower.name),
      ],
      owner: pair.privileged.name,
      assertion: {
        kind: "status_in",
        step: "other",
        values: [401, 403, 404],
        message: `${pair.lower.name} (${pair.lower.role}) must not reach an operation of ${pair.privileged.role}s`,
      },
    });
  }
  return leaks;
}

async function observe(
  run: ProbeRun,
  factory: ResourceFactory,
  operation: Operation,
  pair: VerticalPair,
): Promise<Observation | undefined> {
  let pathValues: Record<string, string> = {};
  if (pathParameterNames(operation.path).length > 0) {
    const located = await factory.pathValuesFor(operation, pair.privileged.name).catch(() => undefined);
    if (!located) return undefined;
    pathValues = located.values;
  }
  const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues });
  // Both at once: a log or feed others write to meanwhile must not decide the comparison.
  const [privileged, lower] = await Promise.all([
    sendPrepared(run, pair.privileged.name, prepared),
    sendPrepared(run, pair.lower.name, prepared),
  ]);
  if (
    !privileged ||
    !isSuccess(privileged) ||
    !carriesData(privileged.response?.json, privileged.response?.body ?? "")
  )
    return undefined;
  if (!lower) return undefined;
  const status = statusOf(lower);
  return {
    operation,
    pair,
    prepared,
    privileged,
    lower,
    same: isSuccess(lower) && sameData(answer(privileged), answer(lower)),
    refused: status === 401 || status === 403,
  };
}

function documentsForbidden(operation: Operation): boolean {
  return Object.keys(operation.responses).includes("403");
}

/** `/api/admin` for `/api/admin/users`: the area an operation belongs to. */
function prefixOf(path: string): string {
  const segments = toTemplateForm(path).split("/").filter(Boolean);
  return `/${segments.slice(0, -1).join("/")}`;
}

/**
 * Whether a prefix is an area of the API (`/api/admin`) rather than its root (`/api`, `/`): it holds at most a
 * third of the operations. A refusal somewhere under the root says nothing about its other operations.
 */
function isArea(prefix: string, paths: readonly string[]): boolean {
  if (prefix === "/") return false;
  const under = paths.filter((path) => path.startsWith(`${prefix}/`)).length;
  return under * 3 <= paths.length;
}
