import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { isSafeWrite, operationKey } from "../api/operation-index.ts";
import { requestSchema } from "../api/request-builder.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { RecordCreator } from "./record-creator.ts";
import { quantities, type Representation, readBack, sendOnRecord } from "./state-reads.ts";

// A stored value derived from others — a total from quantity × unit price or from its lines, an end from a
// start and a duration, a count of lines — must follow its parts when an update changes them (CWE-1250,
// CWE-682). The trial creates a record of its own with chosen, distinct numbers, learns which relation the
// create applied (the derived field matches it exactly), changes the parts through the update operation and
// reads the record back. A derived field that kept its old value while the parts moved is stale — but only
// reported when a fresh creation with the new parts yields the new value, so the relation is the
// application's own rule and not a coincidence of the chosen numbers.

type JsonSchema = Record<string, unknown>;

export type Relation =
  | { kind: "product" | "sum"; left: string; right: string }
  | { kind: "lines-sum"; lines: string; part: string }
  | { kind: "lines-product"; lines: string; left: string; right: string }
  | { kind: "lines-count"; lines: string };

/** Top-level numbers and arrays of objects with a number in them: the parts a derived field is made of. */
export interface Parts {
  numbers: Record<string, number>;
  lines: Record<string, Array<Record<string, unknown>>>;
}

const FIRST = [3, 7, 11, 13];
const SECOND = [5, 9, 17, 19];
// Per line: the first numeric property, and the second one where a line has two (quantity and price).
const FIRST_LINES = [
  [5, 9, 14, 23],
  [7, 3, 2, 11],
];
const SECOND_LINES = [
  [6, 31],
  [4, 9],
];

function propertiesOf(schema: JsonSchema | undefined): Record<string, JsonSchema> {
  const properties = schema?.properties;
  return properties && typeof properties === "object" ? (properties as Record<string, JsonSchema>) : {};
}

function isNumeric(schema: JsonSchema | undefined): boolean {
  return (schema?.type === "integer" || schema?.type === "number") && schema.enum === undefined;
}

function fits(schema: JsonSchema, value: number): boolean {
  const minimum = typeof schema.minimum === "number" ? schema.minimum : Number.NEGATIVE_INFINITY;
  const maximum = typeof schema.maximum === "number" ? schema.maximum : Number.POSITIVE_INFINITY;
  return value >= minimum && value <= maximum;
}

/** Body parts to send: chosen numbers for the numeric properties, chosen lines for arrays of objects. */
export function chooseParts(schema: JsonSchema | undefined, round: 0 | 1): Parts | undefined {
  const numbers: Record<string, number> = {};
  const lines: Parts["lines"] = {};
  let index = 0;
  for (const [name, property] of Object.entries(propertiesOf(schema))) {
    if (property.readOnly === true || /(^|_)id$/i.test(name)) continue;
    if (isNumeric(property)) {
      const value = (round === 0 ? FIRST : SECOND)[index % FIRST.length]!;
      if (!fits(property, value)) continue;
      numbers[name] = value;
      index += 1;
      continue;
    }
    const items = property.type === "array" ? (property.items as JsonSchema | undefined) : undefined;
    const itemProperties = Object.entries(propertiesOf(items));
    const numeric = itemProperties.filter(([, entry]) => isNumeric(entry)).map(([key]) => key);
    if (numeric.length < 1 || numeric.length > 2) continue;
    const columns = round === 0 ? FIRST_LINES : SECOND_LINES;
    lines[name] = columns[0]!.map((_, position) =>
      Object.fromEntries(
        itemProperties.flatMap(([key, entry]): Array<[string, unknown]> => {
          if (isNumeric(entry)) {
            const amount = columns[numeric.indexOf(key)]![position]!;
            return fits(entry, amount) ? [[key, amount]] : [];
          }
          if (entry.type === "string") return [[key, `L${position + 1}`]];
          if (entry.type === "boolean") return [[key, false]];
          return [];
        }),
      ),
    );
  }
  return Object.keys(numbers).length + Object.keys(lines).length > 0 ? { numbers, lines } : undefined;
}

/** The value `relation` gives for the parts a record holds (undefined when they are not there). */
export function relationValue(relation: Relation, state: Representation): number | undefined {
  if (relation.kind === "lines-sum" || relation.kind === "lines-count" || relation.kind === "lines-product") {
    const lines = state[relation.lines];
    if (!Array.isArray(lines)) return undefined;
    if (relation.kind === "lines-count") return lines.length;
    const factors = relation.kind === "lines-sum" ? [relation.part] : [relation.left, relation.right];
    let total = 0;
    for (const line of lines) {
      const values = factors.map((factor) => (line as Record<string, unknown> | null)?.[factor]);
      if (!values.every((value): value is number => typeof value === "number")) return undefined;
      total += values.reduce((product, value) => product * value, 1);
    }
    return total;
  }
  const left = state[relation.left];
  const right = state[relation.right];
  if (typeof left !== "number" || typeof right !== "number") return undefined;
  return relation.kind === "product" ? left * right : left + right;
}

/** Relations over the sent parts that explain a field of the created record exactly, field → relation. */
export function learnRelations(
  parts: Parts,
  created: Representation,
): Array<{ field: string; relation: Relation }> {
  const candidates: Relation[] = [];
  const names = Object.keys(parts.numbers);
  for (const [index, left] of names.entries()) {
    for (const right of names.slice(index + 1)) {
      candidates.push({ kind: "product", left, right }, { kind: "sum", left, right });
    }
  }
  for (const [name, items] of Object.entries(parts.lines)) {
    const numeric = Object.keys(items[0] ?? {}).filter((key) => typeof items[0]![key] === "number");
    for (const part of numeric) candidates.push({ kind: "lines-sum", lines: name, part });
    if (numeric.length === 2)
      candidates.push({ kind: "lines-product", lines: name, left: numeric[0]!, right: numeric[1]! });
    candidates.push({ kind: "lines-count", lines: name });
  }
  const sent = new Set([...names, ...Object.keys(parts.lines)]);
  const learned: Array<{ field: string; relation: Relation }> = [];
  for (const [field, value] of Object.entries(quantities(created))) {
    if (sent.has(field)) continue;
    const relation = candidates.find((candidate) => relationValue(candidate, created) === value);
    if (relation) learned.push({ field, relation });
  }
  return learned;
}

function describe(relation: Relation): string {
  switch (relation.kind) {
    case "product":
      return `${relation.left} × ${relation.right}`;
    case "sum":
      return `${relation.left} + ${relation.right}`;
    case "lines-sum":
      return `the sum of ${relation.lines}[].${relation.part}`;
    case "lines-product":
      return `the sum of ${relation.lines}[].${relation.left} × ${relation.right}`;
    case "lines-count":
      return `the number of ${relation.lines}`;
  }
}

function partsBody(parts: Parts): Record<string, unknown> {
  return { ...parts.numbers, ...parts.lines };
}

export async function trialDerived(
  run: ProbeRun,
  creator: RecordCreator,
  createFamily: ResourceFamily,
  update: Operation,
  users: ReadonlyArray<string | undefined>,
): Promise<EnvelopeDraft | string> {
  if (!isSafeWrite(update)) return "the update may not be sent";
  const first = chooseParts(requestSchema(createFamily.create!), 0);
  const second = chooseParts(requestSchema(createFamily.create!), 1);
  if (!first || !second) return "the create takes no numbers or lines";
  let record: Awaited<ReturnType<RecordCreator["create"]>>["record"];
  for (const user of users) {
    record = (await creator.create(createFamily, user, { overrides: partsBody(first) })).record;
    if (record) break;
  }
  if (!record) return "no record of the probe's own could be created with chosen numbers";
  const before = await readBack(creator, record);
  if (!before) return "the created record cannot be read back";
  const learned = learnRelations(first, before.state);
  if (learned.length === 0) return "no field of the record is derived from the numbers sent";
  const patch = update.method.toUpperCase() === "PATCH";
  const body = patch ? partsBody(second) : { ...(record.request.body as object), ...partsBody(second) };
  const changed = await sendOnRecord(run, record, update, { body });
  if (!changed.exchange || !isSuccess(changed.exchange))
    return `the update answered ${statusOf(changed.exchange)}`;
  const after = await readBack(creator, record);
  if (!after) return "the record cannot be read after the update";
  for (const { field, relation } of learned) {
    const expected = relationValue(relation, after.state);
    const before_ = relationValue(relation, before.state);
    if (expected === undefined || expected === before_) continue;
    if (after.state[field] === expected || after.state[field] !== before.state[field]) continue;
    // The second signal: a record created with the new parts gets the new value.
    const witness = (await creator.create(createFamily, record.owner, { overrides: partsBody(second) }))
      .record;
    const witnessRead = witness ? await readBack(creator, witness) : undefined;
    if (!witnessRead || witnessRead.state[field] !== relationValue(relation, witnessRead.state)) continue;
    return finding(run, update, field, relation, {
      stale: after.state[field],
      expected,
      exchanges: [
        { label: "create", exchange: record.exchange },
        { label: "read-after-create", exchange: before.exchange },
        { label: "update-parts", exchange: changed.exchange },
        { label: "read-after-update", exchange: after.exchange },
        { label: "create-with-new-parts", exchange: witnessRead.exchange },
      ],
    });
  }
  return `the derived field(s) ${learned.map((entry) => entry.field).join(", ")} followed the update`;
}

function finding(
  run: ProbeRun,
  update: Operation,
  field: string,
  relation: Relation,
  seen: { stale: unknown; expected: number; exchanges: Array<{ label: string; exchange: HttpExchange }> },
): EnvelopeDraft {
  const key = operationKey(update);
  const rule = describe(relation);
  return buildFinding(run, {
    domain: "data",
    defectClass: "data-integrity",
    title: `${key} leaves ${field} stale: it no longer equals ${rule} after the parts change`,
    summary: [
      `A record of the probe's own, created with chosen numbers, had ${field} = ${rule}; a record created with the new numbers gets the new value too, so that is the application's rule.`,
      `${key} changed the parts and the record, read back, shows them changed but ${field} still ${String(seen.stale)} where the rule gives ${seen.expected}.`,
      "The derived value is computed on create only and the update writes the parts without it.",
      `Fix: recompute ${field} in the same UPDATE as its parts (or compute it on read instead of storing it).`,
    ].join(" "),
    impact: `Readers of ${field} (invoices, schedules, reports) see a value that disagrees with the record's own parts.`,
    location: { kind: "endpoint", value: key },
    severity: "medium",
    confidence: 0.9,
    discriminator: `derived:${field}`,
    exchanges: seen.exchanges,
  });
}
