import type { Operation, Table } from "../../map/system-map.ts";
import type { ResourceFamily } from "../api/operation-index.ts";
import { isSafeWrite, operationKey, resourceFamilies } from "../api/operation-index.ts";
import { requestSchema } from "../api/request-builder.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";
import type { AssumptionSite, DataAssumption } from "./assumptions.ts";
import { columnForProperty, findTable, snakeCase, tableForPath, UPPER_OF } from "./naming.ts";

// Two columns that bound one span — a period's start and end, a stay's check-in and check-out, a range's
// minimum and maximum — where nothing in the schema keeps the end from coming before the start. The
// name alone does not make the order a rule: the application must refuse an inverted pair on one write
// path (its own statement of the rule) and store one on another before it is reported.

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

export interface PairWrite {
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
export function pairWrites(
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
