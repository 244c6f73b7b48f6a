import type { Operation } from "../../map/system-map.ts";
import { isAuthOperation } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import { buildRequest } from "../api/request-builder.ts";
import type { CreatedResource, ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { Leak } from "./authz-support.ts";
import { answer, reproFor, targetOf } from "./authz-support.ts";

// Private records in an anonymous answer (CWE-306): a read without path parameters — an export, a report,
// a feed — that shows anonymous callers a record the probe created as a signed-in user, while that
// record's own read refuses them. A read the document declares public (`security: []`) is a showcase on
// purpose (a catalogue of names and prices); one merely without a requirement is what the code does (a
// framework documents each route as written), and the application's own refusal of the record says
// what it should do. Two signals: the record whole (every field the probe planted, as its owner reads
// them) in the anonymous answer, twice, and the refusal of its item read.

const MAX_RECORDS = 6;

export async function checkAnonymousDisclosure(
  run: ProbeRun,
  factory: ResourceFactory,
  reads: readonly Operation[],
): Promise<Leak[]> {
  const records = factory.created
    .filter((record) => record.owner !== undefined && record.markers.length > 0 && record.family.read)
    .slice(0, MAX_RECORDS);
  if (records.length === 0) return [];
  const privacy = new Map<CreatedResource, Promise<Refusal | undefined>>();
  const refusalOf = (record: CreatedResource) => {
    let pending = privacy.get(record);
    if (!pending) {
      pending = refused(run, record);
      privacy.set(record, pending);
    }
    return pending;
  };
  const leaks: Leak[] = [];
  await mapConcurrent(
    reads.filter((read) => !read.declared_public && !isAuthOperation(read) && !read.graphql),
    4,
    async (read) => {
      const prepared = buildRequest(read, { seed: uniqueSeed() });
      const anonymous = await sendPrepared(run, undefined, prepared);
      if (!anonymous || !isSuccess(anonymous) || run.sessions.endedSession(anonymous)) return;
      const shown = records.filter((record) => shows(anonymous, record));
      for (const record of shown) {
        const refusal = await refusalOf(record);
        if (!refusal || !showsWhole(anonymous, refusal.planted)) continue;
        const again = await sendPrepared(run, undefined, prepared);
        if (!again || !isSuccess(again) || !showsWhole(again, refusal.planted)) return;
        const target = targetOf(record);
        const repro = reproFor(target, [{ name: "other", prepared, user: undefined }]);
        const texts = repro.markers.filter((_, index) =>
          answer(anonymous).text.includes(record.markers[index]!),
        );
        leaks.push({
          operation: read,
          principal: { user: undefined, relation: "anonymous" },
          action: "read",
          ownerExchange: refusal.owner,
          otherExchange: anonymous,
          confirmExchange: refusal.anonymous,
          steps: repro.steps,
          owner: record.owner!,
          technique: "disclosure",
          assertion: {
            kind: "denied_or_lacks",
            step: "other",
            texts,
            message: `anonymous callers must not see ${record.owner}'s records`,
          },
        });
        return;
      }
    },
  );
  return leaks;
}

interface Refusal {
  owner: HttpExchange;
  anonymous: HttpExchange;
  /** The values of the owner's view that carry what the probe planted, one per field. */
  planted: string[];
}

/** The record's own read: answered to its owner, refused to anonymous callers (401, 403, or sign-in). */
async function refused(run: ProbeRun, record: CreatedResource): Promise<Refusal | undefined> {
  const read = record.family.read!;
  const prepared = buildRequest(read, { seed: uniqueSeed(), pathValues: record.pathValues });
  const owner = await sendPrepared(run, record.owner, prepared);
  if (!owner || !isSuccess(owner) || !shows(owner, record)) return undefined;
  const anonymous = await sendPrepared(run, undefined, prepared);
  if (!anonymous) return undefined;
  const status = statusOf(anonymous);
  return status === 401 || status === 403 || run.sessions.endedSession(anonymous)
    ? { owner, anonymous, planted: plantedValues(owner, record) }
    : undefined;
}

/** The owner's view's fields (of the object, or of its one wrapped object) whose values hold a marker. */
function plantedValues(exchange: HttpExchange, record: CreatedResource): string[] {
  const json = exchange.response?.json;
  if (!json || typeof json !== "object" || Array.isArray(json)) return [];
  const values = Object.values(json as Record<string, unknown>);
  const [only] = values;
  const fields =
    values.length === 1 && only && typeof only === "object" && !Array.isArray(only)
      ? Object.values(only)
      : values;
  return fields.filter(
    (value): value is string =>
      typeof value === "string" && record.markers.some((marker) => value.includes(marker)),
  );
}

/**
 * Whether an answer shows the record whole: one of its objects (a JSON answer) or lines (CSV, text) holds
 * every field the probe planted, two at least. A list that shows a record's name and withholds the rest (a
 * public directory of titles beside private secrets) is a showcase, not the record. Planted values may be
 * alike, so they are counted, not just looked for.
 */
function showsWhole(exchange: HttpExchange, planted: readonly string[]): boolean {
  if (planted.length < 2) return false;
  const json = exchange.response?.json;
  const units: string[][] =
    json !== null && typeof json === "object"
      ? objectsIn(json, 0).map((object) => Object.values(object).filter((value) => typeof value === "string"))
      : answer(exchange)
          .text.split("\n")
          .map((line) => [line]);
  const wanted = new Map<string, number>();
  for (const value of planted) wanted.set(value, (wanted.get(value) ?? 0) + 1);
  return units.some((unit) =>
    [...wanted].every(([value, times]) => {
      const found = unit.reduce(
        (sum, text) =>
          sum + (unit.length === 1 ? text.split(value).length - 1 : text.includes(value) ? 1 : 0),
        0,
      );
      return found >= times;
    }),
  );
}

function objectsIn(value: unknown, depth: number): Array<Record<string, unknown>> {
  if (depth > 6 || value === null || typeof value !== "object") return [];
  const children = Array.isArray(value) ? value : Object.values(value);
  const own = Array.isArray(value) ? [] : [value as Record<string, unknown>];
  return [...own, ...children.flatMap((child) => objectsIn(child, depth + 1))];
}

function shows(exchange: HttpExchange, record: CreatedResource): boolean {
  const text = answer(exchange).text;
  return record.markers.some((marker) => text.includes(marker));
}
