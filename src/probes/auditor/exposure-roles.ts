import type { Operation, Parameter } from "../../map/system-map.ts";
import { isAuthOperation } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, clonePrepared } from "../api/request-builder.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { roleRank } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { Observed, ObserveStats } from "./exposure-observe.ts";
import { queryParameters } from "./exposure-observe.ts";
import { carriesData } from "./same-data.ts";

// A read the least privileged user is refused is read again as each higher role: staff and back-office
// endpoints are where records of other people (and their credentials) are served. A lookup that finds a
// record by an email or a user name answers nothing for a made-up value, so it is asked with addresses the
// run already knows: the profile's own users and those the caller saw in its answers. Other people's
// personal data is such a role's daily work, so only credentials count in what it is answered.

/** Higher roles read, one user each, least privileged first. */
const MAX_ROLES = 2;
/** Known addresses tried per lookup operation. */
const MAX_LOOKUPS = 4;
const EMAIL_IN_TEXT = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
/** `email`, `user_email`, `login`, `username`: a query parameter that names a person by an address. */
const LOOKUP_NAME = /^(?:[a-z]+_?)?(?:e-?mail(?:_?address)?|login|user_?name)$/i;

/** The query parameters that find a record by an email or a sign-in name. */
export function lookupParameters(parameters: readonly Parameter[]): Parameter[] {
  return parameters.filter((parameter) => {
    const schema = (parameter.schema ?? {}) as { format?: unknown };
    return LOOKUP_NAME.test(parameter.name) || schema.format === "email";
  });
}

/** One user of each role above the lowest, least privileged first. */
export function higherRoleUsers(
  users: readonly ProfileUser[],
  lowest: ProfileUser | undefined,
): ProfileUser[] {
  if (!lowest) return [];
  const chosen: ProfileUser[] = [];
  const roles = new Set([lowest.role.toLowerCase()]);
  for (const user of [...users].sort((a, b) => roleRank(a.role) - roleRank(b.role))) {
    if (roles.has(user.role.toLowerCase()) || roleRank(user.role) < roleRank(lowest.role)) continue;
    roles.add(user.role.toLowerCase());
    chosen.push(user);
  }
  return chosen.slice(0, MAX_ROLES);
}

function refusedReads(operations: readonly Operation[], observations: readonly Observed[], lowest: string) {
  return operations.filter((operation) => {
    if (operation.method.toUpperCase() !== "GET" || isAuthOperation(operation)) return false;
    const reads = observations.filter(
      (observed) =>
        observed.operation === operation && observed.purpose === "read" && observed.user === lowest,
    );
    return (
      reads.length > 0 &&
      reads.every((observed) => statusOf(observed.exchange) === 401 || statusOf(observed.exchange) === 403)
    );
  });
}

/** Addresses seen in answers to `user` first, then the profile's other users' sign-in names. */
function knownAddresses(
  observations: readonly Observed[],
  users: readonly ProfileUser[],
  user: ProfileUser,
): string[] {
  const seen: string[] = [];
  for (const observed of observations) {
    if (observed.user !== user.name) continue;
    for (const match of (observed.exchange.response?.body ?? "").slice(0, 200_000).matchAll(EMAIL_IN_TEXT))
      seen.push(match[0].toLowerCase());
  }
  const profile = users
    .filter((other) => other.name !== user.name && other.username?.includes("@"))
    .sort((a, b) => Number(b.tenant === user.tenant) - Number(a.tenant === user.tenant))
    .map((other) => other.username!.toLowerCase());
  const own = user.username?.toLowerCase();
  return [...new Set([...seen, ...profile])].filter((address) => address !== own);
}

function answered(observed: Observed | undefined): boolean {
  const response = observed?.exchange.response;
  return Boolean(
    observed && isSuccess(observed.exchange) && carriesData(response?.json, response?.body ?? ""),
  );
}

/**
 * Reads every GET the lowest user was refused as each higher role (until one is answered), then asks
 * the lookups among them that found nothing again with known addresses. Observations join `observations`.
 */
export async function observeHigherRoles(
  run: ProbeRun,
  factory: ResourceFactory,
  operations: readonly Operation[],
  users: readonly ProfileUser[],
  lowest: ProfileUser | undefined,
  observations: Observed[],
  stats: ObserveStats,
  reserve = 0,
): Promise<void> {
  if (!lowest) return;
  let pending = refusedReads(operations, observations, lowest.name);
  for (const user of higherRoleUsers(users, lowest)) {
    if (pending.length === 0) return;
    const firstReads = new Map<Operation, Observed>();
    await mapConcurrent(pending, 4, async (operation) => {
      if (run.client.remaining() <= reserve) return;
      const observed = await readAs(run, factory, operation, user.name);
      stats.reads += 1;
      if (!observed) return;
      observations.push(observed);
      firstReads.set(operation, observed);
    });
    const addresses = knownAddresses(observations, users, user);
    await mapConcurrent([...firstReads.entries()], 4, async ([operation, first]) => {
      if (answered(first) || statusOf(first.exchange) === 401 || statusOf(first.exchange) === 403) return;
      const parameters = lookupParameters(queryParameters(run, operation));
      for (const parameter of parameters.slice(0, 1)) {
        for (const address of addresses.slice(0, MAX_LOOKUPS)) {
          if (run.client.remaining() <= reserve) return;
          const prepared = withQuery(first.prepared, parameter.name, address);
          const exchange = await sendPrepared(run, user.name, prepared);
          stats.reads += 1;
          if (!exchange?.response) continue;
          const observed: Observed = {
            operation,
            prepared,
            user: user.name,
            exchange,
            purpose: "read",
            elevated: true,
          };
          observations.push(observed);
          firstReads.set(operation, observed);
          if (answered(observed)) return;
        }
      }
    });
    pending = pending.filter((operation) => !answered(firstReads.get(operation)));
  }
}

async function readAs(
  run: ProbeRun,
  factory: ResourceFactory,
  operation: Operation,
  user: string,
): Promise<Observed | undefined> {
  let pathValues: Record<string, string> = {};
  if (pathParameterNames(operation.path).length > 0) {
    const located = await factory.pathValuesFor(operation, user).catch(() => undefined);
    if (!located) return undefined;
    pathValues = located.values;
  }
  const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues });
  const exchange = await sendPrepared(run, user, prepared);
  if (!exchange?.response) return undefined;
  return { operation, prepared, user, exchange, purpose: "read", elevated: true };
}

function withQuery(prepared: PreparedRequest, name: string, value: string): PreparedRequest {
  const copy = clonePrepared(prepared);
  copy.query = { ...copy.query, [name]: value };
  return copy;
}
