import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation, Table } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { isItemPath, operationKey, selectOperations } from "../api/operation-index.ts";
import {
  candidateUsers,
  pacingKey,
  responseSchemaFor,
  sendAsRightRole,
  sendPrepared,
} from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, toSpec } from "../api/request-builder.ts";
import { listItems, ResourceFactory, uniqueSeed } from "../api/resource-factory.ts";
import type { RunAccount } from "../auth/run-accounts.ts";
import { sendAsAccount } from "../auth/run-accounts.ts";
import { columnForProperty, tableForName } from "../data/naming.ts";
import { RecordCreator } from "../data/record-creator.ts";
import type { DatabaseHandle } from "../data/target-database.ts";
import { databaseOf, loadTables, quoteName, readOnly } from "../data/target-database.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { slowOperationsFor } from "../http/slow-operations.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import { propertiesOf, schemaType } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { openProbeRun, send, usableUsers } from "../session/probe-run.ts";
import type { StatementLog, StatementWindow } from "./statement-log.ts";
import { statementLogOf } from "./statement-log.ts";

// What every LOAD probe shares: the probe run (budgeted client, sessions), the statement log, a factory
// for data the probe owns, and how to address an operation (user, path ids) once and reuse it.

export interface LoadRun {
  run: ProbeRun;
  /** The live database (read-only), when reachable: a source of path ids no list operation gives. */
  database: { handle: DatabaseHandle; tables: Table[] } | undefined;
  log: StatementLog | undefined;
  factory: ResourceFactory;
  /** Records created under a parent of the probe's own (nested collections), removed by cleanUp. */
  creator: RecordCreator;
  users: Array<string | undefined>;
  /** Operation key → the user and path values that reached it with a 2xx. */
  reached: Map<string, { user: string | undefined; pathValues: Record<string, string> } | null>;
  /** Operation key → the request that was sent and got no answer in time (the client's timeout). */
  stalled: Map<string, { user: string | undefined; prepared: PreparedRequest; exchange: HttpExchange }>;
  /** Per operation, how the last request that did not reach it was answered ("answered 404", "timeout"). */
  unreached: Map<string, string>;
}

/** What a LOAD probe concluded about one operation: a summary for its stats, a finding when there is one. */
export interface LoadOutcome {
  summary: Record<string, unknown>;
  candidate?: EnvelopeDraft;
}

export async function openLoadRun(
  context: ToolContext,
  tool: string,
  maxRequests: number,
  timeoutMs?: number,
): Promise<LoadRun | string> {
  const run = openProbeRun(context, tool, { max_requests: maxRequests, timeout_ms: timeoutMs });
  if (typeof run === "string") return run;
  const log = statementLogOf(context);
  if (typeof log === "string") run.notes.push(log);
  const handle = databaseOf(context);
  const tables = typeof handle === "string" ? [] : (await loadTables(context, handle)).tables;
  return {
    run,
    database: typeof handle === "string" || tables.length === 0 ? undefined : { handle, tables },
    log: typeof log === "string" ? undefined : log,
    factory: new ResourceFactory(run),
    creator: new RecordCreator(run),
    users: candidateUsers(await usableUsers(run)),
    reached: new Map(),
    stalled: new Map(),
    unreached: new Map(),
  };
}

const LIMIT_NAME =
  /^(limit|per_?page|perpage|page_?size|pagesize|size|take|count|max|max_?results|top|first|results_?per_?page|num)$/i;
const SKIPPED_PATH =
  /(^|\/)(health|healthz|ready|readyz|live|livez|metrics|status|ping|version|openapi|swagger|docs|login|logout|token|session|sessions|auth)(\.json)?(\/|$)/i;

/** The query parameter that caps a page, when the operation documents one. */
export function limitParameter(operation: Operation): string | undefined {
  return operation.parameters.find((parameter) => parameter.in === "query" && LIMIT_NAME.test(parameter.name))
    ?.name;
}

/**
 * GET operations that answer a collection: those whose documented schema is a list first, then those that
 * document no schema and do not name one item (pages and undocumented routes, which may or may not be).
 */
export function listOperations(context: ToolContext, filter?: string): Operation[] {
  const map = context.systemMap();
  if (!map) return [];
  const documented: Operation[] = [];
  const guessed: Operation[] = [];
  for (const operation of selectOperations(map, filter)) {
    if (operation.method.toUpperCase() !== "GET" || SKIPPED_PATH.test(toTemplateForm(operation.path)))
      continue;
    const schema = responseSchemaFor(operation, 200);
    if (!schema) {
      if (!isItemPath(operation.path)) guessed.push(operation);
      continue;
    }
    const type = schemaType(schema);
    const isList =
      type === "array" ||
      (type === "object" &&
        Object.values(propertiesOf(schema)).some((property) => schemaType(property) === "array"));
    if (isList) documented.push(operation);
  }
  return [...documented, ...guessed];
}

/** Readable GET operations for timing and plan checks. */
export function readOperations(context: ToolContext, filter?: string): Operation[] {
  const map = context.systemMap();
  if (!map) return [];
  return selectOperations(map, filter).filter(
    (operation) =>
      operation.method.toUpperCase() === "GET" && !SKIPPED_PATH.test(toTemplateForm(operation.path)),
  );
}

/**
 * A request for `operation` that was answered 2xx, as the least privileged user it accepts — or, with
 * `fixed`, as that user under those path values (a parent of the probe's own).
 */
export async function reach(
  load: LoadRun,
  operation: Operation,
  query: Record<string, string> = {},
  fixed?: { user: string | undefined; pathValues: Record<string, string> },
  options: { paced?: boolean } = {},
): Promise<{ user: string | undefined; prepared: PreparedRequest; exchange: HttpExchange } | undefined> {
  const key = operationKey(operation);
  const known = fixed ?? load.reached.get(key);
  if (known === null) return undefined;
  const build = async (user: string | undefined) => {
    const located =
      known ??
      (await load.factory.pathValuesFor(operation, user)) ??
      (await databasePathValues(load, operation));
    if (!located) return undefined;
    const values = "values" in located ? located.values : located.pathValues;
    const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: values });
    prepared.query = { ...prepared.query, ...query };
    return prepared;
  };
  const users = known ? [known.user] : load.users;
  const sent = await sendAsRightRole(
    load.run,
    users,
    build,
    options.paced === false ? (_run, user, prepared) => sendUnpaced(load, user, prepared) : undefined,
  );
  if (
    !sent &&
    options.paced !== false &&
    slowOperationsFor(load.run.context).isPacedOut(pacingKey(operation))
  ) {
    // Not an answer: the run leaves a slow operation alone for a while, and a later probe may reach it.
    load.unreached.set(key, "left alone for now: it answers slowly");
    return undefined;
  }
  if (!sent || !isSuccess(sent.exchange)) {
    load.unreached.set(
      key,
      !sent
        ? "no request could be built"
        : sent.exchange.error
          ? sent.exchange.error
          : `answered ${sent.exchange.response?.status} as ${sent.user ?? "anonymous"}`,
    );
    if (!known) load.reached.set(key, null);
    if (sent?.exchange.error === "timeout") load.stalled.set(key, sent);
    return undefined;
  }
  load.reached.set(key, { user: sent.user, pathValues: sent.prepared.pathValues });
  return sent;
}

/** Why an operation is skipped as unreached, with how its last try was answered when one was sent. */
export function unreachedReason(load: LoadRun, key: string): string {
  const last = load.unreached.get(key);
  return `no user got a 2xx answer${last ? ` (last: ${last})` : ""}`;
}

/**
 * A request sent without the run's pacing of slow operations: for the probe that times them. Pacing keeps
 * probes from piling onto a slow handler; timing has to reach it (one request at a time, in a measurement
 * window). Its answer is still shown to the pacing, so that a stall it causes is blamed on it.
 */
export async function sendUnpaced(
  load: LoadRun,
  user: string | undefined,
  prepared: PreparedRequest,
  /** An account the run registered itself, to send as instead of `user`. */
  account?: RunAccount,
): Promise<HttpExchange | undefined> {
  const spec = toSpec(load.run.target.baseUrl, prepared);
  const exchange = account ? await sendAsAccount(load.run, account, spec) : await send(load.run, user, spec);
  // A request that got no answer says nothing of how long the handler takes (and clears nothing).
  const answered = exchange?.response && !exchange.error ? exchange.durationMs : undefined;
  slowOperationsFor(load.run.context).observe(pacingKey(prepared.operation), answered);
  return exchange;
}

/**
 * Path ids read from the database (read-only) when no list operation yields them: `/users/by-email/{email}`
 * takes an email of the nearest table named in the path, `{id}` its primary key.
 */
async function databasePathValues(
  load: LoadRun,
  operation: Operation,
): Promise<{ values: Record<string, string> } | undefined> {
  const database = load.database;
  const names = pathParameterNames(operation.path);
  if (!database || names.length === 0) return undefined;
  const segments = toTemplateForm(operation.path).split("/").filter(Boolean);
  const values: Record<string, string> = {};
  for (const name of names) {
    const at = segments.indexOf(`{${name}}`);
    const table = segments
      .slice(0, Math.max(at, 0))
      .reverse()
      .filter((segment) => !segment.startsWith("{"))
      .map((segment) => tableForName(database.tables, segment))
      .find((candidate) => candidate !== undefined);
    if (!table) return undefined;
    const key = table.columns.find((column) => column.primary_key)?.name;
    const column = columnForProperty(table, name) ?? (/^(id|.*[_-]?id)$/i.test(name) ? key : undefined);
    if (!column) return undefined;
    const found = await readOnly(database.handle, (query) =>
      query(
        `SELECT ${quoteName(column)} AS v FROM ${quoteName(table.name)} WHERE ${quoteName(column)} IS NOT NULL LIMIT 1`,
      ),
    );
    const value = found?.[0]?.v;
    if (value === undefined || value === null) return undefined;
    values[name] = String(value);
  }
  return { values };
}

export interface Sample {
  exchange: HttpExchange;
  items: number | undefined;
  window: StatementWindow | undefined;
}

/** Sends a prepared request inside the statement log's window, with the target to itself. */
export async function sample(
  load: LoadRun,
  user: string | undefined,
  prepared: PreparedRequest,
  options: { paced?: boolean } = {},
): Promise<Sample | undefined> {
  const sendOne = () =>
    options.paced === false ? sendUnpaced(load, user, prepared) : sendPrepared(load.run, user, prepared);
  if (!load.log) {
    const exchange = await sendOne();
    return exchange ? { exchange, items: itemCount(exchange), window: undefined } : undefined;
  }
  const log = load.log;
  // In a measurement window: statements of other agents' requests would otherwise land in this one's.
  const { result, window } = await load.run.client.quietly(() => log.around(sendOne));
  return result ? { exchange: result, items: itemCount(result), window } : undefined;
}

/**
 * The fewest statements over `times` samples: other agents may be sending traffic at the same time, and
 * their statements only ever add to a window, so the minimum is the closest to this request's own.
 */
export async function quietestSample(
  load: LoadRun,
  user: string | undefined,
  prepared: PreparedRequest,
  times = 3,
): Promise<Sample | undefined> {
  let best: Sample | undefined;
  for (let index = 0; index < times; index += 1) {
    const current = await sample(load, user, prepared);
    if (!current || !isSuccess(current.exchange)) return best ?? current;
    if (!best || (current.window?.queries.length ?? 0) < (best.window?.queries.length ?? 0)) best = current;
  }
  return best;
}

export function itemCount(exchange: HttpExchange): number | undefined {
  const json = exchange.response?.json;
  // A CSV download: one row per line after the header.
  if (json === undefined && /\bcsv\b/i.test(exchange.response?.headers["content-type"] ?? ""))
    return Math.max(
      (exchange.response?.body ?? "").split(/\r?\n/).filter((line) => line.trim()).length - 1,
      0,
    );
  if (Array.isArray(json)) return json.length;
  if (!json || typeof json !== "object") return undefined;
  const items = listItems(json);
  return items.length > 0 || Object.values(json).some(Array.isArray) ? items.length : undefined;
}

/** The JSON path of the item array in an answer (`""` for a bare array), for generated assertions. */
export function itemsPath(exchange: HttpExchange): string | undefined {
  const json = exchange.response?.json;
  if (Array.isArray(json)) return "";
  if (!json || typeof json !== "object") return undefined;
  const record = json as Record<string, unknown>;
  const key = Object.keys(record).find(
    (name) => Array.isArray(record[name]) && record[name] === listItems(json),
  );
  return key;
}

/**
 * The family whose `create` adds items to this list: the same collection path, else the collection a
 * report, export or search beside it reads (`/orders/report` lists `/orders`).
 */
export function familyOfList(load: LoadRun, operation: Operation): ResourceFamily | undefined {
  const families = load.factory.families;
  const path = toTemplateForm(operation.path).replace(/\/+$/, "");
  const at = (collection: string) =>
    families.find((family) => family.collection === collection && family.list === operation) ??
    families.find((family) => family.collection === collection);
  const exact = at(path);
  if (exact?.create) return exact;
  const segments = path.split("/");
  const last = segments.at(-1) ?? "";
  if (segments.length < 3 || last.startsWith("{")) return exact;
  const parent = at(segments.slice(0, -1).join("/"));
  return parent?.create ? parent : exact;
}

/**
 * One more item in `family`. The factory tracks what it creates (for clean-up) but needs an item path to
 * address it; a collection without one still grows through its create operation, untracked.
 */
export async function addItem(
  load: LoadRun,
  family: ResourceFamily,
  user: string | undefined,
): Promise<boolean> {
  if (family.idParameter) return (await load.factory.create(family, user)) !== undefined;
  if (!family.create || family.parentParameters.length > 0) return false;
  const exchange = await sendPrepared(load.run, user, buildRequest(family.create, { seed: uniqueSeed() }));
  return exchange !== undefined && isSuccess(exchange);
}

/** Deletes what the probe created (only that), newest first; failures are noted, not fatal. */
export async function cleanUp(load: LoadRun): Promise<number> {
  // Children made under a parent go first: deleting the parent may take them along (or refuse).
  let removed = (await load.creator.cleanUp()).removed;
  for (const resource of [...load.factory.created].reverse()) {
    const remove = resource.family.remove;
    if (!remove || !resource.family.idParameter) continue;
    const prepared = buildRequest(remove, { seed: uniqueSeed(), pathValues: resource.pathValues });
    const exchange = await sendPrepared(load.run, resource.owner, prepared).catch(() => undefined);
    if (exchange && isSuccess(exchange)) removed += 1;
  }
  load.factory.created.length = 0;
  return removed;
}
