import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation, SystemMap } from "../../map/system-map.ts";
import type { ReproStep } from "../evidence/failing-test.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { type JsonSchema, propertiesOf } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import type { ResourceFamily } from "./operation-index.ts";
import { lastStaticSegment, nounOf, operationKey, resourceFamilies } from "./operation-index.ts";
import { endpointLocation, responseSchemaFor, sendPrepared } from "./probe-support.ts";
import { buildRequest, type PreparedRequest, requestSchema } from "./request-builder.ts";
import { idOf, listItems, type ResourceFactory, uniqueSeed } from "./resource-factory.ts";

// The same field of the same object should have one type wherever the API shows it. A list that answers
// `"hours": 12.5` while the item read answers `"hours": "12.50"` is a contract in itself, broken, even with
// no document to name it: a client that parsed one representation breaks on the other. Judged only where
// no document declares the item's answer (the document's own validator covers the rest), and only when
// the two values are the same datum in two types (12.5 and "12.50", true and "true") on every item
// compared, read twice: a field that merely means different things in two places is not flagged.

const ITEMS_PER_FAMILY = 3;
const NUMERIC_COLUMN = /int|real|num|dec|float|double|money|serial/i;
const BOOLEAN_COLUMN = /bool/i;

type JsonType = "number" | "string" | "boolean";

interface Drift {
  field: string;
  listType: JsonType;
  itemType: JsonType;
  /** The type the API's other sources (write schemas, the database column) give the field, if any. */
  expected: JsonType | undefined;
  listValue: unknown;
  itemValue: unknown;
}

interface Observed {
  list: { prepared: PreparedRequest; exchange: HttpExchange };
  item: { prepared: PreparedRequest; exchange: HttpExchange };
  drifts: Drift[];
  /** Where the compared object sits in each answer (`items.0`, `data`), for the failing test's paths. */
  listPath: string;
  itemPath: string;
}

/** Contract drift between a collection's items and the item read of the same objects, without a document. */
export async function checkRepresentations(
  run: ProbeRun,
  factory: ResourceFactory,
  users: ReadonlyArray<string | undefined>,
): Promise<EnvelopeDraft[]> {
  const families = resourceFamilies(run.map.operations).filter(
    (family) => family.list && family.read && family.idParameter && !documentsItem(family.read),
  );
  const findings: EnvelopeDraft[] = [];
  for (const family of families) {
    for (const user of users) {
      const observed = await observeFamily(run, factory, family, user);
      if (observed === "denied") continue;
      if (observed) findings.push(driftFinding(run, family, user, observed));
      break;
    }
  }
  return findings;
}

function documentsItem(read: Operation): boolean {
  return read.seen_in.includes("openapi") && responseSchemaFor(read, 200) !== undefined;
}

async function observeFamily(
  run: ProbeRun,
  factory: ResourceFactory,
  family: ResourceFamily,
  user: string | undefined,
): Promise<Observed | "denied" | undefined> {
  const listOperation = family.list!;
  const readOperation = family.read!;
  const located = await factory.pathValuesFor(listOperation, user);
  if (!located) return undefined;
  const listRequest = buildRequest(listOperation, { seed: uniqueSeed(), pathValues: located.values });
  const listExchange = await sendPrepared(run, user, listRequest);
  const status = listExchange?.response?.status ?? 0;
  if (status === 401 || status === 403) return "denied";
  if (!listExchange || !isSuccess(listExchange)) return undefined;
  const listJson = listExchange.response?.json;
  const all = listItems(listJson);
  const wrapper = isRecord(listJson) ? Object.keys(listJson).find((key) => listJson[key] === all) : undefined;
  const items = all
    .filter((item): item is Record<string, unknown> => isRecord(item) && idOf(item, family) !== undefined)
    .slice(0, ITEMS_PER_FAMILY);
  let first: Observed | undefined;
  const agreed = new Map<string, Drift>();
  for (const listed of items) {
    // An item the caller cannot read on its own (archived, moved) says nothing; the others still do.
    const read = await readTwice(run, user, readOperation, family, located.values, idOf(listed, family)!);
    if (!read) continue;
    const drifts = compare(listed, read.json, family, run.map);
    // Every item compared must drift the same way; one that does not clears the field.
    if (!first) for (const drift of drifts) agreed.set(drift.field, drift);
    else
      for (const field of [...agreed.keys()])
        if (!drifts.some((drift) => drift.field === field)) agreed.delete(field);
    first ??= {
      list: { prepared: listRequest, exchange: listExchange },
      item: { prepared: read.prepared, exchange: read.exchange },
      drifts: [],
      listPath: [wrapper, String(all.indexOf(listed))].filter((part) => part !== undefined).join("."),
      itemPath: read.wrapper ?? "",
    };
  }
  if (!first || agreed.size === 0) return undefined;
  return { ...first, drifts: [...agreed.values()] };
}

async function readTwice(
  run: ProbeRun,
  user: string | undefined,
  operation: Operation,
  family: ResourceFamily,
  parents: Record<string, string>,
  id: string,
): Promise<
  | { prepared: PreparedRequest; exchange: HttpExchange; json: Record<string, unknown>; wrapper?: string }
  | undefined
> {
  const prepared = buildRequest(operation, {
    seed: uniqueSeed(),
    pathValues: { ...parents, [family.idParameter!]: id },
  });
  const exchange = await sendPrepared(run, user, prepared);
  const again = await sendPrepared(run, user, prepared);
  const json = exchange?.response?.json;
  const againJson = again?.response?.json;
  if (!exchange || !isSuccess(exchange) || !again || !isSuccess(again)) return undefined;
  const item = unwrapItem(json);
  const againItem = unwrapItem(againJson);
  if (!item || !againItem) return undefined;
  // A representation that changes between two reads says nothing stable about types.
  for (const [field, value] of Object.entries(item.record))
    if (jsonType(value) !== jsonType(againItem.record[field])) return undefined;
  return { prepared, exchange, json: item.record, wrapper: item.wrapper };
}

/** The object an item read answers: the body, or its one object-valued wrapper (`{ "data": {...} }`). */
function unwrapItem(json: unknown): { record: Record<string, unknown>; wrapper?: string } | undefined {
  if (!isRecord(json)) return undefined;
  const keys = Object.keys(json);
  const only = keys.length === 1 ? json[keys[0]!] : undefined;
  return isRecord(only) ? { record: only, wrapper: keys[0] } : { record: json };
}

function compare(
  listed: Record<string, unknown>,
  read: Record<string, unknown>,
  family: ResourceFamily,
  map: SystemMap,
): Drift[] {
  const drifts: Drift[] = [];
  for (const [field, listValue] of Object.entries(listed)) {
    if (!(field in read)) continue;
    const itemValue = read[field];
    const listType = jsonType(listValue);
    const itemType = jsonType(itemValue);
    if (!listType || !itemType || listType === itemType) continue;
    if (!sameDatum(listValue, itemValue)) continue;
    drifts.push({
      field,
      listType,
      itemType,
      expected: expectedType(field, family, map),
      listValue,
      itemValue,
    });
  }
  return drifts;
}

function jsonType(value: unknown): JsonType | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return "number";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "string") return "string";
  return undefined;
}

/** 12.5 and "12.50", 3 and "3", true and "true": one datum in two types. "" and 0 are not. */
function sameDatum(left: unknown, right: unknown): boolean {
  const [text, other] = typeof left === "string" ? [left, right] : [right as string, left];
  if (typeof text !== "string" || text.trim() === "") return false;
  if (typeof other === "number") return /^-?\d+(\.\d+)?$/.test(text.trim()) && Number(text) === other;
  if (typeof other === "boolean") return text.trim().toLowerCase() === String(other);
  return false;
}

/** What the rest of the application says the field is: a write schema's type, else the column's. */
function expectedType(field: string, family: ResourceFamily, map: SystemMap): JsonType | undefined {
  for (const write of [family.create, ...family.updates]) {
    const schema = write ? requestSchema(write) : undefined;
    const declared = schemaType(schema ? propertiesOf(schema)[field] : undefined);
    if (declared) return declared;
  }
  const noun = nounOf(lastStaticSegment(family.collection) ?? "");
  const table = map.database?.tables.find((candidate) => nounOf(candidate.name) === noun);
  const column = table?.columns.find((candidate) => candidate.name === field);
  if (!column) return undefined;
  if (BOOLEAN_COLUMN.test(column.type)) return "boolean";
  if (NUMERIC_COLUMN.test(column.type)) return "number";
  return undefined;
}

function schemaType(schema: JsonSchema | undefined): JsonType | undefined {
  const type = schema?.type;
  if (type === "integer" || type === "number") return "number";
  if (type === "boolean" || type === "string") return type;
  return undefined;
}

function driftFinding(
  run: ProbeRun,
  family: ResourceFamily,
  user: string | undefined,
  observed: Observed,
): EnvelopeDraft {
  const listKey = operationKey(family.list!);
  const itemKey = operationKey(family.read!);
  // The side whose type disagrees with the rest of the application is the one to fix; undecided, the item.
  const decided = observed.drifts.find((drift) => drift.expected !== undefined);
  const wrongSide =
    decided && decided.expected === decided.itemType && decided.expected !== decided.listType
      ? "list"
      : "item";
  const [wrong, right] = wrongSide === "item" ? [family.read!, family.list!] : [family.list!, family.read!];
  const fields = observed.drifts.map(
    (drift) =>
      `${drift.field} (${JSON.stringify(drift.listValue)} in the list, ${JSON.stringify(drift.itemValue)} in the item)`,
  );
  const steps: ReproStep[] = [
    stepFromPrepared("list", observed.list.prepared, user),
    stepFromPrepared("item", observed.item.prepared, user),
  ];
  const assertions = observed.drifts.map((drift) => {
    const type =
      wrongSide === "item" ? (drift.expected ?? drift.listType) : (drift.expected ?? drift.itemType);
    return {
      kind: "json_type" as const,
      step: wrongSide,
      path: [wrongSide === "item" ? observed.itemPath : observed.listPath, drift.field]
        .filter(Boolean)
        .join("."),
      type,
      message: `${drift.field} must be a ${type} in ${operationKey(wrong)}, as elsewhere in the API`,
    };
  });
  return buildFinding(run, {
    domain: "api",
    defectClass: "contract-drift",
    title: `${operationKey(wrong)} answers ${observed.drifts.map((drift) => drift.field).join(", ")} in another type than ${operationKey(right)}`,
    summary: `The same objects read through ${listKey} and ${itemKey} (as ${user ?? "anonymous"}) carry the same values in different JSON types: ${fields.join("; ")}.${decided ? ` The write operations or the database column make it a ${decided.expected}.` : ""} Read twice, with the same result.`,
    impact:
      "Clients that parse one representation break on the other (a number compared as text, arithmetic on a string).",
    location: endpointLocation(wrong),
    related: [endpointLocation(right)],
    severity: severityFor("contract-drift"),
    confidence: decided ? 0.85 : 0.75,
    discriminator: `representation-${observed.drifts.map((drift) => drift.field).join("-")}`,
    exchanges: [
      { label: "list", exchange: observed.list.exchange },
      { label: "item", exchange: observed.item.exchange },
    ],
    repro: { title: `${operationKey(wrong)} uses the API's type for each field`, steps, assertions },
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return Boolean(value) && typeof value === "object" && !Array.isArray(value);
}
