import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest } from "../api/request-builder.ts";
import type { CreatedResource, ResourceFactory } from "../api/resource-factory.ts";
import { idOf, listItems, uniqueSeed } from "../api/resource-factory.ts";
import { visibleText } from "../guide/served-page.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import { pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { ObjectSlot } from "./access-slots.ts";
import { fillSlot } from "./access-slots.ts";

// How the owner sees one of its objects, to judge what another caller's request did to it: the item read
// when there is one, else a read that takes the id in its query or body, else the owner's own list. A write
// is proven by what the owner sees change, never by the status the other caller got.

export interface Sighting {
  /** present: the owner sees it; absent: the read answers 404/410 or the list no longer shows it. */
  state: "present" | "absent";
  /** The object as the owner sees it (the read's answer, or the list's item). */
  item?: unknown;
  exchange: HttpExchange;
  prepared: PreparedRequest;
}

export interface OwnerView {
  /** `GET /invoices/{id}`-like description for evidence. */
  operation: Operation;
  look(user: string | undefined): Promise<Sighting | undefined>;
}

const LIMIT_PARAMETER = /^(limit|per_?page|page_?size|pagesize|size|max|take|top)$/i;

/** The best view of `resource` its owner has; undefined when nothing can show it. */
export function ownerView(
  run: ProbeRun,
  factory: ResourceFactory,
  resource: CreatedResource,
  readSlots: readonly ObjectSlot[],
): OwnerView | undefined {
  const family = resource.family;
  const read = family.read;
  if (
    read &&
    family.idParameter &&
    pathParameterNames(read.path).every((name) => resource.pathValues[name])
  ) {
    return { operation: read, look: (user) => lookThrough(run, read, resource, user) };
  }
  const slotted = readSlots.find(
    (slot) =>
      slot.family === family &&
      slot.place !== "path" &&
      slot.operation.method.toUpperCase() === "GET" &&
      pathParameterNames(slot.operation.path).every((name) => resource.pathValues[name]),
  );
  if (slotted) {
    return {
      operation: slotted.operation,
      look: (user) => lookThrough(run, slotted.operation, resource, user, slotted),
    };
  }
  const lister = listerOf(factory, family);
  if (lister?.list && pathParameterNames(lister.list.path).every((name) => resource.pathValues[name])) {
    const list = lister.list;
    return { operation: list, look: (user) => lookInList(run, list, resource, user) };
  }
  return undefined;
}

function listerOf(factory: ResourceFactory, family: ResourceFamily): ResourceFamily | undefined {
  if (family.list) return family;
  const creator = factory.creatorOf(family);
  return creator?.list ? creator : undefined;
}

async function lookThrough(
  run: ProbeRun,
  operation: Operation,
  resource: CreatedResource,
  user: string | undefined,
  slot?: ObjectSlot,
): Promise<Sighting | undefined> {
  const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: resource.pathValues });
  if (slot) fillSlot(prepared, slot, resource.id);
  const exchange = await sendPrepared(run, user, prepared);
  if (!exchange?.response) return undefined;
  const status = statusOf(exchange);
  if (status === 404 || status === 410) return { state: "absent", exchange, prepared };
  if (!isSuccess(exchange)) return undefined;
  const json = exchange.response.json;
  const item = json === undefined ? pageItem(exchange, resource) : unwrapItem(json, resource);
  // A 200 that shows nothing of the object (an empty body, `null`) is how some APIs say "gone".
  if (item === undefined || item === null) return { state: "absent", exchange, prepared };
  return { state: "present", item, exchange, prepared };
}

/** The owner's list, paged as far as its largest page allows, looked through for the object's id. */
async function lookInList(
  run: ProbeRun,
  list: Operation,
  resource: CreatedResource,
  user: string | undefined,
): Promise<Sighting | undefined> {
  const prepared = buildRequest(list, { seed: uniqueSeed(), pathValues: resource.pathValues });
  const limit = list.parameters.find(
    (parameter) => parameter.in === "query" && LIMIT_PARAMETER.test(parameter.name),
  );
  if (limit) prepared.query[limit.name] = "100";
  const exchange = await sendPrepared(run, user, prepared);
  if (!exchange || !isSuccess(exchange)) return undefined;
  const items = listItems(exchange.response?.json);
  const item = items.find((candidate) => idOf(candidate, resource.family) === resource.id);
  if (item !== undefined) return { state: "present", item, exchange, prepared };
  // A full page may have pushed the object out of sight: only a list that is not full proves it gone.
  if (items.length >= 100 || (items.length === 0 && exchange.response?.json === undefined)) return undefined;
  return { state: "absent", exchange, prepared };
}

/**
 * A server-rendered item page as the object: its visible words, when they show the object (a value the
 * probe planted in it). Numbers are read as one shape, so what changes is the words a write sets — a
 * status, a title — not a clock.
 */
function pageItem(exchange: HttpExchange, resource: CreatedResource): { page: string } | undefined {
  if (!/html/i.test(exchange.response?.headers["content-type"] ?? "")) return undefined;
  const body = exchange.response?.body ?? "";
  if (!resource.markers.some((marker) => body.includes(marker))) return undefined;
  return { page: visibleText(body) };
}

/** The object in a read's answer: the body, or its one wrapped object (`{ "invoice": {…} }`). */
function unwrapItem(json: unknown, resource: CreatedResource): unknown {
  if (json === undefined || json === null) return json;
  if (typeof json !== "object" || Array.isArray(json)) return json;
  if (idOf(json, resource.family) !== undefined) return json;
  const objects = Object.values(json as Record<string, unknown>).filter(
    (value) => value && typeof value === "object" && !Array.isArray(value),
  );
  return objects.length === 1 ? objects[0] : json;
}

const VOLATILE_KEY =
  /(^|_)(at|on|time|timestamp|date|ts|etag|version|revision|request_?id|trace_?id|nonce|views?|view_?count|hits|reads?|accessed|seen|csrf.*)$|At$|Time$|Count$/i;

function leaves(value: unknown, path: string, into: Map<string, string>): void {
  if (Array.isArray(value)) {
    for (const [index, item] of value.slice(0, 50).entries()) leaves(item, `${path}[${index}]`, into);
    return;
  }
  if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if (VOLATILE_KEY.test(key)) continue;
      leaves(inner, path ? `${path}.${key}` : key, into);
    }
    return;
  }
  into.set(path, JSON.stringify(value));
}

/**
 * The fields of an object that changed between two sightings, leaving out those that already differed
 * between two sightings before anything was sent (counters, clocks the key names do not reveal).
 */
export function changedFields(
  before: unknown,
  after: unknown,
  restless: ReadonlySet<string> = new Set(),
): string[] {
  const a = new Map<string, string>();
  const b = new Map<string, string>();
  leaves(before, "", a);
  leaves(after, "", b);
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].filter((key) => !restless.has(key) && a.get(key) !== b.get(key)).sort();
}

/** Fields that differ between two sightings of an untouched object. */
export function restlessFields(first: unknown, second: unknown): Set<string> {
  return new Set(changedFields(first, second));
}
