import type { Operation, Table } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { isSafeWrite, operationKey, resourceFamilies } from "../api/operation-index.ts";
import { requestSchema } from "../api/request-builder.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess, statusOf } from "../http/http-types.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";
import { numberBounds } from "../schema-values/valid-value.ts";
import type { ApiTrial, TrialContext } from "./api-trials.ts";
import type { AssumptionSite, DataAssumption } from "./assumptions.ts";
import { columnForProperty, findTable, snakeCase, tableForPath } from "./naming.ts";
import type { OwnedRecord } from "./record-creator.ts";
import { RecordCreator } from "./record-creator.ts";
import { columnOfRow } from "./trial-values.ts";

// Two columns that bound one span — a period's start and end, a stay's check-in and check-out, a range's
// minimum and maximum — where nothing in the schema keeps the end from coming before the start. The
// name alone does not make the order a rule: the application must refuse an inverted pair on one write
// path (its own statement of the rule) and store one on another before it is reported.

/** The word of the lower bound → the words that can name its upper bound. */
const UPPER_OF: Record<string, string[]> = {
  start: ["end", "finish", "stop"],
  starts: ["ends", "finishes", "stops"],
  started: ["ended", "finished", "stopped"],
  begin: ["end"],
  begins: ["ends"],
  from: ["to", "until", "till", "through", "thru"],
  since: ["until", "till"],
  open: ["close"],
  opens: ["closes"],
  opening: ["closing"],
  opened: ["closed"],
  in: ["out"],
  checkin: ["checkout"],
  arrival: ["departure"],
  arrive: ["depart"],
  arrives: ["departs"],
  pickup: ["dropoff", "return"],
  min: ["max"],
  minimum: ["maximum"],
  lower: ["upper"],
  low: ["high"],
  earliest: ["latest"],
};
/** Words that order numbers as well as times (`min_guests`, `price_from`); the rest only order times. */
const NUMERIC_WORDS = new Set(["min", "minimum", "lower", "low", "from", "start", "begin"]);
const DATE_HINT = /^(date|day|on|dob)$/;
const TIME_HINT = /^(at|time|datetime|timestamp|ts)$/;

export type PairValues = "date" | "date-time" | "number";

export interface OrderedPair {
  lower: string;
  upper: string;
  values: PairValues;
}

interface PropertyHints {
  format?: string;
  type?: string;
}

function valuesOf(
  words: string[],
  columnType: string,
  hints: PropertyHints,
  numeric: boolean,
): PairValues | undefined {
  const format = hints.format?.toLowerCase();
  if (format === "date") return "date";
  if (format === "date-time") return "date-time";
  if (format === "time") return undefined;
  if (/^date$/i.test(columnType)) return "date";
  if (/timestamp|datetime|^time\s*with|date/i.test(columnType)) return "date-time";
  if (/^time/i.test(columnType)) return undefined;
  if (
    /int|real|num|dec|float|double|money/i.test(columnType) ||
    hints.type === "integer" ||
    hints.type === "number"
  )
    return numeric ? "number" : undefined;
  // Text columns (SQLite keeps dates as TEXT): only a name that says what the text is.
  if (words.some((word) => DATE_HINT.test(word))) return "date";
  if (words.some((word) => TIME_HINT.test(word))) return "date-time";
  return undefined;
}

/**
 * The ordered pairs among `table`'s columns: a column whose name holds a lower-bound word, beside one
 * named the same with its upper-bound word (`starts_on`/`ends_on`, `check_in`/`check_out`,
 * `valid_from`/`valid_until`, `min_guests`/`max_guests`), whose values can be ordered.
 */
export function orderedPairs(
  table: Table,
  hints: (column: string) => PropertyHints = () => ({}),
): OrderedPair[] {
  const byName = new Map(table.columns.map((column) => [snakeCase(column.name), column]));
  const pairs: OrderedPair[] = [];
  for (const [snake, column] of byName) {
    const words = snake.split("_");
    words.forEach((word, index) => {
      const uppers = UPPER_OF[word];
      // `in` and `out` pair only beside another word (`check_in`), never alone.
      if (!uppers || (word === "in" && words.length < 2)) return;
      for (const upperWord of uppers) {
        const name = [...words.slice(0, index), upperWord, ...words.slice(index + 1)].join("_");
        const upper = byName.get(name);
        if (!upper || upper === column) continue;
        const values = valuesOf(
          words,
          column.type,
          hints(column.name),
          NUMERIC_WORDS.has(word) && words.length > 1,
        );
        if (!values || valuesOf(name.split("_"), upper.type, hints(upper.name), true) === undefined) continue;
        pairs.push({ lower: column.name, upper: upper.name, values });
        return;
      }
    });
  }
  return pairs;
}

/** A CHECK that names both columns keeps their order (or at least relates them): enforced. */
function orderCheck(table: Table, pair: OrderedPair): string | undefined {
  const mentions = (check: string, column: string) => new RegExp(`\\b${column}\\b`, "i").test(check);
  return table.checks.find((check) => mentions(check, pair.lower) && mentions(check, pair.upper));
}

interface PairWrite {
  operation: Operation;
  family: ResourceFamily;
  /** The request properties carrying the lower and upper column. */
  lower: string;
  upper: string;
}

function propertyFor(table: Table, schema: JsonSchema | undefined, column: string): string | undefined {
  return Object.keys(propertiesOf(schema ?? {})).find(
    (property) => columnForProperty(table, property) === column,
  );
}

/** The creates carrying both columns, then the updates of what they create carrying either. */
function pairWrites(
  families: readonly ResourceFamily[],
  tables: readonly Table[],
  table: Table,
  pair: OrderedPair,
) {
  const creates: PairWrite[] = [];
  const updates: PairWrite[] = [];
  for (const family of families) {
    if (findTable(tables, tableForPath(tables, family.collection)?.name ?? "") !== table) continue;
    const create = family.create;
    if (create && isSafeWrite(create)) {
      const schema = requestSchema(create);
      const lower = propertyFor(table, schema, pair.lower);
      const upper = propertyFor(table, schema, pair.upper);
      if (lower && upper) creates.push({ operation: create, family, lower, upper });
    }
    for (const update of family.updates) {
      if (!isSafeWrite(update)) continue;
      const schema = requestSchema(update);
      const lower = propertyFor(table, schema, pair.lower);
      const upper = propertyFor(table, schema, pair.upper);
      if (lower || upper)
        updates.push({ operation: update, family, lower: lower ?? pair.lower, upper: upper ?? pair.upper });
    }
  }
  return { creates, updates };
}

function siteOf(operation: Operation, document: string, pair: OrderedPair): AssumptionSite {
  return {
    file: operation.handler?.file ?? document,
    line: operation.handler?.line ?? 0,
    via: `${operationKey(operation)} writes ${pair.lower} and ${pair.upper}`,
  };
}

/** One assumption per ordered pair that some operation writes: `ordered:bookings.starts_on,ends_on`. */
export function orderedPairAssumptions(
  operations: readonly Operation[],
  tables: readonly Table[],
  document = "the API document",
): DataAssumption[] {
  const assumptions: DataAssumption[] = [];
  const families = resourceFamilies(operations);
  for (const table of tables) {
    const hints = (column: string): PropertyHints => {
      for (const operation of operations) {
        const schema = requestSchema(operation);
        const property = propertyFor(table, schema, column);
        const declared = property ? propertiesOf(schema ?? {})[property] : undefined;
        if (declared && (declared.format || declared.type))
          return {
            ...(typeof declared.format === "string" ? { format: declared.format } : {}),
            ...(typeof declared.type === "string" ? { type: declared.type } : {}),
          };
      }
      return {};
    };
    for (const pair of orderedPairs(table, hints)) {
      const writes = pairWrites(families, tables, table, pair);
      const all = [...writes.creates, ...writes.updates];
      if (all.length === 0) continue;
      const check = orderCheck(table, pair);
      assumptions.push({
        id: `ordered:${table.name}.${pair.lower},${pair.upper}`,
        kind: "ordered",
        table: table.name,
        columns: [pair.lower, pair.upper],
        pair: pair.values,
        enforced: check !== undefined,
        ...(check ? { enforcedBy: `CHECK (${check})` } : {}),
        sites: all.map((write) => siteOf(write.operation, document, pair)),
        reason: `${table.name}.${pair.upper} bounds the span that ${table.name}.${pair.lower} starts: it must not come before it`,
      });
    }
  }
  return assumptions;
}

/** A valid pair and an upper bound below its lower one, in the form the columns hold. */
export function pairValues(
  values: PairValues,
  schema: JsonSchema = {},
): { lower: unknown; upper: unknown; inverted: unknown } {
  if (values === "number") {
    const { min, max } = numberBounds(schema);
    const base = min ?? 0;
    const fits = max === undefined || base + 20 <= max;
    return fits
      ? { lower: base + 10, upper: base + 20, inverted: base + 5 }
      : { lower: base + 2, upper: base + 3, inverted: base + 1 };
  }
  if (values === "date") return { lower: "2024-03-01", upper: "2024-03-31", inverted: "2024-02-01" };
  return { lower: "2024-03-01T09:00:00Z", upper: "2024-03-31T17:00:00Z", inverted: "2024-02-01T09:00:00Z" };
}

function comparable(value: unknown, values: PairValues): number | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  const number = values === "number" ? Number(value) : Date.parse(String(value));
  return Number.isFinite(number) ? number : undefined;
}

interface Stored {
  lower: unknown;
  upper: unknown;
  query?: string;
  readBack?: HttpExchange;
}

/** The record's pair as stored: from the database when it can be read, else through its read operation. */
async function storedPair(
  context: TrialContext,
  creator: RecordCreator,
  assumption: DataAssumption,
  record: OwnedRecord,
  write: PairWrite,
  answer: HttpExchange,
): Promise<Stored | undefined> {
  const [lower, upper] = assumption.columns as [string, string];
  const table = findTable(context.tables, assumption.table);
  const key = table?.columns.find((entry) => entry.primary_key)?.name ?? "id";
  if (record.id) {
    const low = await columnOfRow(context.handle, assumption.table, key, record.id, lower);
    const high = await columnOfRow(context.handle, assumption.table, key, record.id, upper);
    if (low?.found && high?.found) return { lower: low.value, upper: high.value, query: high.query };
  }
  const read = await creator.read(record, record.owner);
  const json = (read && isSuccess(read) ? read.response?.json : answer.response?.json) as
    | Record<string, unknown>
    | undefined;
  if (!json || typeof json !== "object" || !(write.lower in json) || !(write.upper in json)) return undefined;
  return { lower: json[write.lower], upper: json[write.upper], ...(read ? { readBack: read } : {}) };
}

const REFUSAL = new Set([400, 409, 422]);

interface Attempt {
  write: PairWrite;
  user: string | undefined;
  exchange: HttpExchange;
  stored?: Stored;
}

/**
 * The pair sent inverted through every write that carries it — the creates, then updates of records the
 * trial created with a valid pair — and read back. Confirmed when one write refuses the inverted pair
 * and another stores it.
 */
export async function apiOrderTrial(context: TrialContext, assumption: DataAssumption): Promise<ApiTrial> {
  const table = findTable(context.tables, assumption.table);
  const values = assumption.pair;
  if (!table || !values || assumption.columns.length !== 2)
    return { outcome: "skipped", reason: "not an ordered pair of a known table", exchanges: [] };
  const pair = { lower: assumption.columns[0]!, upper: assumption.columns[1]!, values };
  const creator = new RecordCreator(context.run);
  const writes = pairWrites(creator.families, context.tables, table, pair);
  const reasons: string[] = [];
  let refused: Attempt | undefined;
  let stored: Attempt | undefined;
  const inverted = (attempt: Attempt) => {
    const low = comparable(attempt.stored?.lower, values);
    const high = comparable(attempt.stored?.upper, values);
    return low !== undefined && high !== undefined && high < low;
  };
  // A refusal speaks for the order only when the same write with the pair the right way round passes.
  const judge = async (
    attempt: Attempt,
    record: OwnedRecord | undefined,
    control: () => Promise<HttpExchange | undefined>,
  ) => {
    const status = statusOf(attempt.exchange);
    if (REFUSAL.has(status)) {
      if (refused) return;
      const passed = await control();
      if (passed && isSuccess(passed)) refused = attempt;
      else
        reasons.push(
          `${operationKey(attempt.write.operation)} refused the inverted pair, and the valid one too`,
        );
      return;
    }
    if (!isSuccess(attempt.exchange) || !record) {
      reasons.push(`${operationKey(attempt.write.operation)} answered ${status}`);
      return;
    }
    attempt.stored = await storedPair(context, creator, assumption, record, attempt.write, attempt.exchange);
    if (inverted(attempt)) stored ??= attempt;
    else
      reasons.push(
        `${operationKey(attempt.write.operation)} accepted the inverted pair but did not store it`,
      );
  };
  try {
    for (const write of writes.creates.slice(0, 2)) {
      if (refused && stored) break;
      const schema = propertiesOf(requestSchema(write.operation) ?? {})[write.lower];
      const chosen = pairValues(values, schema);
      for (const user of context.users) {
        if (!creator.creatable(write.family)) break;
        const attempt = await creator.create(write.family, user, {
          overrides: { [write.lower]: chosen.lower, [write.upper]: chosen.inverted },
        });
        if (!attempt.exchange) {
          reasons.push(attempt.reason);
          break;
        }
        const status = statusOf(attempt.exchange);
        if (status === 401 || status === 403) continue;
        const valid = { [write.lower]: chosen.lower, [write.upper]: chosen.upper };
        await judge({ write, user, exchange: attempt.exchange }, attempt.record, async () => {
          return (await creator.create(write.family, user, { overrides: valid })).exchange;
        });
        break;
      }
    }
    for (const write of writes.updates.slice(0, 3)) {
      if (refused && stored) break;
      const creation = creator.creationFamilyOf(write.family);
      const creates = writes.creates.find((entry) => entry.family === creation);
      if (!creation || !creates) {
        reasons.push(`no record can be created to update through ${operationKey(write.operation)}`);
        continue;
      }
      const schema = propertiesOf(requestSchema(creates.operation) ?? {})[creates.lower];
      const chosen = pairValues(values, schema);
      for (const user of context.users) {
        const made = await creator.create(creation, user, {
          overrides: { [creates.lower]: chosen.lower, [creates.upper]: chosen.upper },
        });
        const status = made.exchange ? statusOf(made.exchange) : 0;
        if (status === 401 || status === 403) continue;
        const record = made.record;
        if (!record?.itemValues) {
          reasons.push(
            `${operationKey(creates.operation)} did not create a record with a valid pair (${status})`,
          );
          break;
        }
        const exchange = await creator.update(record, write.operation, user, {
          [write.lower]: chosen.lower,
          [write.upper]: chosen.inverted,
        });
        const valid = { [write.lower]: chosen.lower, [write.upper]: chosen.upper };
        if (exchange)
          await judge({ write, user, exchange }, record, () =>
            creator.update(record, write.operation, user, valid),
          );
        break;
      }
    }
  } finally {
    await creator.cleanUp();
  }
  return verdict(assumption, refused, stored, reasons);
}

function verdict(
  assumption: DataAssumption,
  refused: Attempt | undefined,
  stored: Attempt | undefined,
  reasons: string[],
): ApiTrial {
  const [lower, upper] = assumption.columns as [string, string];
  if (stored && refused) {
    const keep = stored.stored!;
    const exchanges = [
      { label: "refused-inverted", exchange: refused.exchange },
      { label: "stored-inverted", exchange: stored.exchange },
      ...(keep.readBack ? [{ label: "read-back", exchange: keep.readBack }] : []),
    ];
    return {
      outcome: "confirmed",
      reason: `${operationKey(refused.write.operation)} refuses ${upper} before ${lower} (${statusOf(refused.exchange)}), but ${operationKey(stored.write.operation)} stored ${upper} = ${String(keep.upper)} before ${lower} = ${String(keep.lower)}`,
      operation: stored.write.operation,
      user: stored.user,
      exchanges,
      column: upper,
      value: keep.upper,
      ...(keep.query ? { verified: { query: keep.query, rows: 1 } } : {}),
    };
  }
  if (stored)
    return {
      outcome: "skipped",
      reason: `${operationKey(stored.write.operation)} stored ${upper} before ${lower}, but no write refuses that: the application does not treat the order as a rule`,
      exchanges: [],
    };
  if (refused)
    return {
      outcome: "rejected",
      reason: `every write that was tried refuses ${upper} before ${lower} (${operationKey(refused.write.operation)}: ${statusOf(refused.exchange)})${reasons.length ? `; ${reasons.join("; ")}` : ""}`,
      operation: refused.write.operation,
      user: refused.user,
      exchanges: [{ label: "refused-inverted", exchange: refused.exchange }],
    };
  return { outcome: "skipped", reason: reasons.join("; ") || "no write carries the pair", exchanges: [] };
}
