import type { Operation, SystemMap } from "../../map/system-map.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { joinUrl, pathParameterNames } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";

// Whether a forged request changed anything is judged by what the user reads afterwards, not by its status:
// the marker it planted shows up in a collection or page the same user reads back. And since the probe may
// have renamed one of the user's records, what that record said before is found in the earlier read, so it
// can be put back.

const MAX_PLACES = 4;
/** Sibling reads looked at, at most, after the collections above and the form's page. */
const MAX_SIBLINGS = 2;

/**
 * Where the effect of a POST to `operation` would show: GET collections above it, the form's page, then
 * reads beside it (`/orders/checkout` shows its effect on `/orders/mine`, not on a page above it).
 */
export function readBackPlaces(map: SystemMap, operation: Operation): string[] {
  const target = segments(operation.path);
  const reads = map.operations
    .filter((candidate) => candidate.method.toUpperCase() === "GET" && !candidate.graphql)
    .filter((candidate) => pathParameterNames(candidate.path).length === 0)
    .filter((candidate) => !candidate.parameters.some((parameter) => parameter.required))
    .map((candidate) => segments(candidate.path));
  const ancestors = reads
    .filter((parts) => parts.length > 0 && parts.length <= target.length)
    .filter((parts) => parts.every((part, index) => part === target[index]))
    .sort((left, right) => right.length - left.length)
    .map((parts) => `/${parts.join("/")}`);
  const parent = target.slice(0, -1);
  const siblings = reads
    .filter((parts) => parts.length === target.length && parts.join("/") !== target.join("/"))
    .filter((parts) => parent.every((part, index) => part === parts[index]))
    .slice(0, MAX_SIBLINGS)
    .map((parts) => `/${parts.join("/")}`);
  const places = [...ancestors, ...(operation.form ? [operation.form.page] : []), ...siblings];
  return [...new Set(places)].filter((place) => pathParameterNames(place).length === 0).slice(0, MAX_PLACES);
}

export interface Snapshot {
  place: string;
  exchange: HttpExchange;
}

/** Reads every place as `user`; places that do not answer 2xx are left out. */
export async function snapshot(run: ProbeRun, user: string, places: readonly string[]): Promise<Snapshot[]> {
  const taken: Snapshot[] = [];
  for (const place of places) {
    const exchange = await send(run, user, {
      method: "GET",
      url: joinUrl(run.target.baseUrl, place),
      headers: { accept: "application/json, text/html;q=0.9, */*;q=0.8" },
    });
    const status = exchange?.response?.status ?? 0;
    if (exchange && status >= 200 && status < 300) taken.push({ place, exchange });
  }
  return taken;
}

/** The first read that shows `marker`. */
export function showing(snapshots: readonly Snapshot[], marker: string): Snapshot | undefined {
  return snapshots.find((item) => item.exchange.response?.body.includes(marker));
}

/**
 * Which record now carries the marker and what its marked properties said before: `created` when the
 * earlier read had no record with that id (the forged request made a new one, the probe's own), `changed`
 * with the earlier values, or `unknown` when the reads are not JSON records with ids.
 */
export type Prior =
  | { kind: "created" }
  | { kind: "changed"; values: Record<string, string> }
  | { kind: "unknown" };

const ID_KEYS = ["id", "uuid", "uid", "_id", "key", "slug"];

export function priorValues(before: Snapshot | undefined, after: Snapshot, marker: string): Prior {
  const afterRecords = records(parseJson(after.exchange.response?.body));
  const marked = afterRecords.filter((record) =>
    Object.values(record).some((value) => typeof value === "string" && value.includes(marker)),
  );
  if (marked.length === 0) return { kind: "unknown" };
  const beforeRecords = before ? records(parseJson(before.exchange.response?.body)) : [];
  const values: Record<string, string> = {};
  for (const record of marked) {
    const key = ID_KEYS.find((name) => record[name] !== undefined && typeof record[name] !== "object");
    if (!key) return { kind: "unknown" };
    const earlier = beforeRecords.find((candidate) => candidate[key] === record[key]);
    if (!earlier) continue;
    for (const [name, value] of Object.entries(record)) {
      if (typeof value !== "string" || !value.includes(marker)) continue;
      const old = earlier[name];
      if (typeof old !== "string") return { kind: "unknown" };
      values[name] = old;
    }
  }
  return Object.keys(values).length === 0 ? { kind: "created" } : { kind: "changed", values };
}

function records(value: unknown): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  const walk = (item: unknown) => {
    if (Array.isArray(item)) item.forEach(walk);
    else if (item && typeof item === "object") {
      found.push(item as Record<string, unknown>);
      Object.values(item).forEach(walk);
    }
  };
  walk(value);
  return found;
}

function parseJson(body: string | undefined): unknown {
  if (!body) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

function segments(path: string): string[] {
  return path.split("?")[0]!.split("/").filter(Boolean);
}
