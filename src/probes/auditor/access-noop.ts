import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation, isSafeWrite } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { bodyKind, buildRequest, requestSchema } from "../api/request-builder.ts";
import { listItems, uniqueSeed } from "../api/resource-factory.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import { chooseBranch, propertiesOf, requiredOf } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { isDangerousPath } from "./access-writes.ts";
import type { Leak } from "./authz-support.ts";

// Cross-tenant writes on objects nobody in the run created (an action endpoint such as
// `POST /tickets/{id}/status` on another tenant's ticket), proven without changing anything: the body
// carries the values the object already has, read from its tenant's own list. The owner tenant's user
// sending that no-op is answered success; a user of another tenant must be refused, and is refused a
// made-up id (the endpoint tells objects apart). Accepted with the owner's answer is the leak.

const MISSING_ID = "987654321";
const FAILURE_FLAG = /"(?:ok|success|succeeded|updated)"\s*:\s*false/i;

interface Known {
  id: string;
  body: Record<string, unknown>;
}

/** A JSON body whose fields are all scalars the object's own record shows: what a no-op write sends. */
function noOpBody(operation: Operation, item: Record<string, unknown>): Record<string, unknown> | undefined {
  const schema = requestSchema(operation);
  if (!schema) return undefined;
  const chosen = chooseBranch(schema);
  const properties = Object.keys(propertiesOf(chosen));
  if (properties.length === 0 || properties.length > 4) return undefined;
  const body: Record<string, unknown> = {};
  for (const name of properties) {
    const value = item[name];
    if (value === undefined) {
      if (requiredOf(chosen).includes(name)) return undefined;
      continue;
    }
    if (value !== null && typeof value === "object") return undefined;
    body[name] = value;
  }
  return Object.keys(body).length > 0 ? body : undefined;
}

function itemId(item: Record<string, unknown>): string | undefined {
  const id = item.id ?? item._id ?? item.uuid;
  return typeof id === "string" || typeof id === "number" ? String(id) : undefined;
}

/** The collection read under which the write's object lives (`GET /tickets` for `/tickets/{id}/status`). */
function collectionOf(run: ProbeRun, operation: Operation): Operation | undefined {
  const path = toTemplateForm(operation.path);
  const cut = path.slice(0, path.indexOf("{")).replace(/\/$/, "");
  return run.map.operations.find(
    (candidate) =>
      candidate.method.toUpperCase() === "GET" &&
      toTemplateForm(candidate.path) === cut &&
      pathParameterNames(candidate.path).length === 0,
  );
}

async function listed(
  run: ProbeRun,
  collection: Operation,
  user: string,
): Promise<Record<string, unknown>[]> {
  const exchange = await sendPrepared(run, user, buildRequest(collection, { seed: uniqueSeed() }));
  if (!exchange || !isSuccess(exchange)) return [];
  return listItems(exchange.response?.json).filter(
    (item): item is Record<string, unknown> =>
      item !== null && typeof item === "object" && !Array.isArray(item),
  );
}

/** A 2xx that does not say it failed (`{"ok": false}`, an `error` field): the server did what was asked. */
function accepted(exchange: HttpExchange | undefined): exchange is HttpExchange {
  if (!exchange || !isSuccess(exchange)) return false;
  const json = exchange.response?.json;
  if (json && typeof json === "object" && !Array.isArray(json) && ("error" in json || "errors" in json))
    return false;
  return !FAILURE_FLAG.test(exchange.response?.body ?? "");
}

function refused(exchange: HttpExchange | undefined): boolean {
  const status = exchange ? statusOf(exchange) : undefined;
  return status !== undefined && status >= 400 && status < 500;
}

function keysOf(exchange: HttpExchange): string {
  const json = exchange.response?.json;
  return json && typeof json === "object" ? Object.keys(json).sort().join(",") : "";
}

/** Pairs of one role in two tenants: the owner's tenant and the outsider's. */
function tenantPairs(users: readonly ProfileUser[]): Array<{ owner: ProfileUser; outsider: ProfileUser }> {
  const pairs: Array<{ owner: ProfileUser; outsider: ProfileUser }> = [];
  for (const owner of users) {
    const outsider = users.find(
      (user) =>
        user.role.toLowerCase() === owner.role.toLowerCase() &&
        user.tenant !== undefined &&
        owner.tenant !== undefined &&
        user.tenant !== owner.tenant,
    );
    if (outsider && !pairs.some((pair) => pair.owner.role === owner.role)) pairs.push({ owner, outsider });
  }
  return pairs;
}

/**
 * Action writes on one object (one path id, a small JSON body) tried by a user of another tenant with a
 * no-op body on an object of the owner tenant's list that the outsider's own list does not hold.
 */
export async function checkCrossTenantNoOps(
  run: ProbeRun,
  operations: readonly Operation[],
  users: readonly ProfileUser[],
): Promise<Leak[]> {
  if (!run.target.writesAllowed) return [];
  const leaks: Leak[] = [];
  const writes = operations.filter(
    (operation) =>
      ["POST", "PUT", "PATCH"].includes(operation.method.toUpperCase()) &&
      operation.security !== "public" &&
      !isAuthOperation(operation) &&
      !operation.graphql &&
      isSafeWrite(operation) &&
      !isDangerousPath(operation.path) &&
      bodyKind(operation) === "json" &&
      pathParameterNames(operation.path).length === 1,
  );
  for (const operation of writes) {
    const collection = collectionOf(run, operation);
    if (!collection) continue;
    for (const { owner, outsider } of tenantPairs(users)) {
      const leak = await tryPair(run, operation, collection, owner, outsider);
      if (leak) {
        leaks.push(leak);
        break;
      }
    }
  }
  return leaks;
}

async function tryPair(
  run: ProbeRun,
  operation: Operation,
  collection: Operation,
  owner: ProfileUser,
  outsider: ProfileUser,
): Promise<Leak | undefined> {
  const [mine, theirs] = await Promise.all([
    listed(run, collection, owner.name),
    listed(run, collection, outsider.name),
  ]);
  const outsiderIds = new Set(theirs.map(itemId));
  const known: Known | undefined = mine
    .map((item) => ({ id: itemId(item), body: noOpBody(operation, item) }))
    .find(
      (entry): entry is Known =>
        entry.id !== undefined && entry.body !== undefined && !outsiderIds.has(entry.id),
    );
  if (!known) return undefined;
  const idName = pathParameterNames(operation.path)[0]!;
  const prepare = (id: string): PreparedRequest => {
    const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: { [idName]: id } });
    prepared.body = { ...known.body };
    return prepared;
  };
  const prepared = prepare(known.id);
  const ownerAnswer = await sendPrepared(run, owner.name, prepared);
  if (!accepted(ownerAnswer)) return undefined;
  // The endpoint must tell objects apart: a made-up id is refused to the outsider.
  const missing = await sendPrepared(run, outsider.name, prepare(MISSING_ID));
  if (!refused(missing)) return undefined;
  const other = await sendPrepared(run, outsider.name, prepared);
  if (!accepted(other) || keysOf(other) !== keysOf(ownerAnswer)) return undefined;
  // The write changed nothing: the owner's list still shows the object with the same values.
  const after = (await listed(run, collection, owner.name)).find((item) => itemId(item) === known.id);
  if (!after || Object.entries(known.body).some(([name, value]) => after[name] !== value)) return undefined;
  return {
    operation,
    principal: { user: outsider, relation: "other-tenant" },
    action: "action",
    ownerExchange: ownerAnswer,
    otherExchange: other,
    confirmExchange: missing,
    steps: [
      stepFromPrepared("owner", prepared, owner.name),
      stepFromPrepared("other", prepared, outsider.name),
    ],
    owner: owner.name,
    assertion: {
      kind: "status_in",
      step: "other",
      values: [401, 403, 404],
      message: `${outsider.name} (another tenant) must not act on ${owner.name}'s tenant's object`,
    },
  };
}
