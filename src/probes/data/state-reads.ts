import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation } from "../api/operation-index.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, toSpec } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import { collectionName, type OwnedRecord, type RecordCreator } from "./record-creator.ts";

// What the state-integrity trials read back: a record's representation through its own read operation,
// the numbers in it that can be business quantities (not ids, versions or clocks) and the short words that
// can be a state. Reading back through the API is the trials' independent second signal: an answer's own
// body may say anything, the stored record is what the next reader sees.

export type Representation = Record<string, unknown>;

/** The JSON object an answer carries (the body, or a single object under `data`/`item`). */
export function representationOf(exchange: HttpExchange | undefined): Representation | undefined {
  const json = exchange?.response?.json;
  if (!json || typeof json !== "object" || Array.isArray(json)) return undefined;
  const object = json as Representation;
  for (const key of ["data", "item", "result"]) {
    const inner = object[key];
    if (inner && typeof inner === "object" && !Array.isArray(inner) && Object.keys(object).length <= 2)
      return inner as Representation;
  }
  return object;
}

/** The record as its read operation answers it now, or undefined when it cannot be read. */
export async function readBack(
  creator: RecordCreator,
  record: OwnedRecord,
): Promise<{ exchange: HttpExchange; state: Representation } | undefined> {
  const exchange = await creator.read(record, record.owner);
  if (!exchange || !isSuccess(exchange)) return undefined;
  const state = representationOf(exchange);
  return state ? { exchange, state } : undefined;
}

// Fields that change on every write, or identify rather than count: never a business quantity.
const NOT_A_QUANTITY =
  /(^|_)(id|ids|uid|uuid|version|lock_version|revision|rev|etag|seq|sequence|nonce)$|(_at|_on|_time|_date|_ts|timestamp)$|^(created|updated|modified|timestamp|time|date)/i;

/** Top-level numeric fields that may be quantities (counters, balances, totals). */
export function quantities(state: Representation): Record<string, number> {
  const found: Record<string, number> = {};
  for (const [name, value] of Object.entries(state)) {
    if (typeof value !== "number" || !Number.isFinite(value)) continue;
    if (NOT_A_QUANTITY.test(name) || name.toLowerCase() === "id") continue;
    // Epoch clocks (seconds or milliseconds) move on their own.
    if (Math.abs(value) >= 1e9) continue;
    found[name] = value;
  }
  return found;
}

const STATE_WORD = /^[A-Za-z][A-Za-z_ -]{1,30}$/;

/** Top-level fields whose value reads like a state word (`open`, `paid`, `on-loan`). */
export function stateWords(state: Representation): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [name, value] of Object.entries(state)) {
    if (typeof value === "string" && STATE_WORD.test(value) && !NOT_A_QUANTITY.test(name))
      found[name] = value;
  }
  return found;
}

const STAMP = /(_at|At|_on|On|_date|Date)$/;

/**
 * The fields whose value differs between two reads, each with its before and after: state words, and time
 * stamps set where there was none (`paid_at`, `cancelledAt`), whose name then stands for the new state.
 */
export function changedWords(
  before: Representation,
  after: Representation,
): Array<{ field: string; from: string; to: string }> {
  const earlier = stateWords(before);
  const later = stateWords(after);
  const words = Object.keys(later)
    .filter((field) => earlier[field] !== undefined && earlier[field] !== later[field])
    .map((field) => ({ field, from: earlier[field]!, to: later[field]! }));
  const stamped = Object.keys(after)
    .filter((field) => STAMP.test(field) && (before[field] === null || before[field] === ""))
    .filter((field) => typeof after[field] === "string" && after[field] !== "")
    .map((field) => ({ field, from: "unset", to: field }));
  return [...words, ...stamped];
}

/** Numeric changes between two reads: field → after − before (only fields that changed). */
export function quantityDeltas(before: Representation, after: Representation): Record<string, number> {
  return movedNumbers(quantities(before), quantities(after));
}

/**
 * A record read back with the parents it was created under (`/books/{id}/loans` → the book): a step on a
 * child often moves a number kept on its parent (the book's stock). Numbers are keyed by field on the
 * record itself and by `collection.field` on a parent.
 */
export interface Snapshot {
  state: Representation;
  numbers: Record<string, number>;
  /** Numbers of the owner's summaries (`club.refunds`), which other users' actions may move too. */
  summaries: Record<string, number>;
  exchanges: HttpExchange[];
}

export async function snapshot(
  creator: RecordCreator,
  record: OwnedRecord,
  summaryReads: readonly Operation[] = [],
): Promise<Snapshot | undefined> {
  const own = await readBack(creator, record);
  if (!own) return undefined;
  const numbers = { ...quantities(own.state) };
  const exchanges = [own.exchange];
  for (const parent of record.parents) {
    const read = await readBack(creator, parent);
    if (!read) continue;
    exchanges.push(read.exchange);
    const name = collectionName(parent.createFamily.collection) || "parent";
    for (const [field, value] of Object.entries(quantities(read.state))) numbers[`${name}.${field}`] = value;
  }
  const summaries: Record<string, number> = {};
  for (const operation of summaryReads) {
    const read = await summaryOf(creator.run, operation, record.owner);
    if (!read) continue;
    exchanges.push(read.exchange);
    const name = collectionName(operation.path) || "summary";
    for (const [field, value] of Object.entries(read.numbers)) summaries[`${name}.${field}`] = value;
  }
  return { state: own.state, numbers, summaries, exchanges };
}

/** Numbers that moved between two snapshots: key → after − before (the owner's summaries with `summaries`). */
export function snapshotDeltas(
  before: Snapshot,
  after: Snapshot,
  options: { summaries?: boolean } = {},
): Record<string, number> {
  return {
    ...movedNumbers(before.numbers, after.numbers),
    ...(options.summaries ? movedNumbers(before.summaries, after.summaries) : {}),
  };
}

function movedNumbers(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const deltas: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const previous = before[key];
    if (previous !== undefined && previous !== value) deltas[key] = value - previous;
  }
  return deltas;
}

const MAX_SUMMARY_CANDIDATES = 12;
const MAX_SUMMARIES = 4;

/**
 * The user's summaries: reads without parameters that answer one object with numbers and no list (`/me`,
 * `/account`, `/club`), where an action on a record often keeps a counter or a balance.
 */
export async function summaryReads(run: ProbeRun, user: string | undefined): Promise<Operation[]> {
  const candidates = run.map.operations
    .filter((operation) => operation.method.toUpperCase() === "GET" && !operation.path.includes("{"))
    .filter((operation) => !isAuthOperation(operation))
    .sort((a, b) => a.path.length - b.path.length)
    .slice(0, MAX_SUMMARY_CANDIDATES);
  const found: Operation[] = [];
  for (const operation of candidates) {
    if (found.length >= MAX_SUMMARIES) break;
    const read = await summaryOf(run, operation, user);
    if (read && Object.keys(read.numbers).length > 0) found.push(operation);
  }
  return found;
}

async function summaryOf(
  run: ProbeRun,
  operation: Operation,
  user: string | undefined,
): Promise<{ exchange: HttpExchange; numbers: Record<string, number> } | undefined> {
  const exchange = await send(
    run,
    user,
    toSpec(run.target.baseUrl, buildRequest(operation, { seed: uniqueSeed() })),
  );
  if (!exchange || !isSuccess(exchange)) return undefined;
  const state = representationOf(exchange);
  if (!state || Object.values(state).some(Array.isArray)) return undefined;
  return { exchange, numbers: quantities(state) };
}

/** Sends `operation` against the record's item path as its owner, with an optional body and headers. */
export async function sendOnRecord(
  run: ProbeRun,
  record: OwnedRecord,
  operation: Operation,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ request: PreparedRequest; exchange: HttpExchange | undefined }> {
  const request = buildRequest(operation, {
    seed: uniqueSeed(),
    pathValues: { ...record.collectionValues, ...(record.itemValues ?? {}) },
  });
  if (options.body !== undefined) request.body = options.body;
  Object.assign(request.headers, options.headers ?? {});
  const exchange = await send(run, record.owner, toSpec(run.target.baseUrl, request));
  return { request, exchange };
}
