import { readAssignments, readInsert, readSelectList } from "./sql-clauses.ts";
import { isName, isValue, readColumn, readValue, stripQuotes } from "./sql-reading.ts";
import type { SqlToken } from "./sql-tokens.ts";
import { tokenizeSql } from "./sql-tokens.ts";

// What a statement says about the data it touches, read from its tokens: the tables, the columns it
// looks rows up by, the joins it relies on, the counters it decrements and the literal states it compares.

export interface TableReference {
  name: string;
  alias?: string;
}

export interface ColumnReference {
  /** The table name or alias written before the column, when there is one. */
  qualifier?: string;
  column: string;
}

export type Assignment =
  | { column: string; kind: "decrement" | "increment"; guarded: boolean }
  | { column: string; kind: "value" | "expression"; literal?: string };

export interface StatementShape {
  verb: "select" | "insert" | "update" | "delete" | "other";
  tables: TableReference[];
  /** `column = value` (a parameter or literal) in WHERE: the columns a lookup finds rows by. */
  equalities: Array<{ column: ColumnReference; literal?: string; caseFolded?: boolean }>;
  /** Every column WHERE filters on by a comparison with a value (=, <, >, IN, BETWEEN, LIKE 'x%'). */
  filters: Array<{ column: ColumnReference; operator: string }>;
  /** `a.x = b.y` in ON or WHERE. */
  joins: Array<{ left: ColumnReference; right: ColumnReference }>;
  assignments: Assignment[];
  insertColumns: string[];
  /** Column → literal written by INSERT … VALUES. */
  insertLiterals: Record<string, string>;
  /** Literal strings a column is compared with or set to (`status = 'paid'`, `status IN ('a', 'b')`). */
  literalComparisons: Array<{ column: ColumnReference; values: string[] }>;
  hasLimit: boolean;
  limitOne: boolean;
  hasOrderBy: boolean;
  hasGroupBy: boolean;
  /** The select list is only aggregates or constants (COUNT(*), 1): one row by nature. */
  aggregateOnly: boolean;
  onConflict: boolean;
}

const CLAUSES = new Set([
  "select",
  "from",
  "join",
  "on",
  "where",
  "set",
  "group",
  "order",
  "having",
  "limit",
  "offset",
  "values",
  "into",
  "returning",
  "union",
  "using",
]);
const COMPARISON = new Set(["=", "==", "<>", "!=", "<", ">", "<=", ">="]);
const NOT_ALIAS = new Set([
  "where",
  "join",
  "inner",
  "left",
  "right",
  "full",
  "outer",
  "cross",
  "on",
  "set",
  "group",
  "order",
  "limit",
  "values",
  "returning",
  "using",
  "natural",
  "union",
  "default",
  "select",
]);

export function analyzeStatement(sql: string): StatementShape {
  const tokens = tokenizeSql(sql);
  const first = tokens.find((token) => token.text !== "(")?.key ?? "";
  const verbs: Record<string, StatementShape["verb"]> = {
    select: "select",
    with: "select",
    insert: "insert",
    replace: "insert",
    upsert: "insert",
    update: "update",
    delete: "delete",
  };
  const shape: StatementShape = {
    verb: verbs[first] ?? "other",
    tables: [],
    equalities: [],
    filters: [],
    joins: [],
    assignments: [],
    insertColumns: [],
    insertLiterals: {},
    literalComparisons: [],
    hasLimit: false,
    limitOne: false,
    hasOrderBy: false,
    hasGroupBy: false,
    aggregateOnly: false,
    onConflict: false,
  };
  // With a CTE the main statement's verb is the first verb after the CTE bodies.
  if (first === "with") {
    let depth = 0;
    for (const token of tokens) {
      if (token.text === "(") depth += 1;
      else if (token.text === ")") depth -= 1;
      else if (depth === 0 && verbs[token.key] && token.key !== "with") {
        shape.verb = verbs[token.key]!;
        break;
      }
    }
  }
  readTables(tokens, shape);
  readConditions(tokens, shape);
  readAssignments(tokens, shape);
  readInsert(tokens, shape);
  readSelectList(tokens, shape);
  const keys = tokens.map((token) => token.key);
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index];
    if (key === "limit") {
      shape.hasLimit = true;
      if (tokens[index + 1]?.text === "1" && tokens[index + 2]?.key !== ",") shape.limitOne = true;
    } else if (key === "fetch" && keys[index + 1] === "first") {
      shape.hasLimit = true;
      if (tokens[index + 2]?.text === "1" || keys[index + 2] === "row") shape.limitOne = true;
    } else if (key === "order" && keys[index + 1] === "by") {
      shape.hasOrderBy = true;
    } else if (key === "group" && keys[index + 1] === "by") {
      shape.hasGroupBy = true;
    } else if (key === "on" && keys[index + 1] === "conflict") {
      shape.onConflict = true;
    } else if (key === "or" && index > 0 && (keys[index - 1] === "insert" || keys[index - 1] === "replace")) {
      shape.onConflict = true;
    } else if (key === "duplicate" && keys[index + 1] === "key") {
      shape.onConflict = true;
    }
  }
  if (first === "replace") shape.onConflict = true;
  return shape;
}

function readTables(tokens: SqlToken[], shape: StatementShape): void {
  for (let index = 0; index < tokens.length; index += 1) {
    const key = tokens[index]!.key;
    const previous = tokens[index - 1]?.key;
    const opensList =
      (key === "from" && previous !== "distinct") ||
      key === "join" ||
      key === "into" ||
      (key === "update" && (index === 0 || previous === ")" || previous === "("));
    if (!opensList) continue;
    let cursor = index + 1;
    for (;;) {
      if (tokens[cursor]?.text === "(" || !isName(tokens[cursor])) break;
      const parts = [tokens[cursor]!.key];
      cursor += 1;
      while (tokens[cursor]?.text === "." && isName(tokens[cursor + 1])) {
        parts.push(tokens[cursor + 1]!.key);
        cursor += 2;
      }
      const reference: TableReference = { name: parts[parts.length - 1]! };
      if (tokens[cursor]?.key === "as") cursor += 1;
      const aliasToken = tokens[cursor];
      if (
        aliasToken &&
        (aliasToken.kind === "word" || aliasToken.kind === "quoted") &&
        !NOT_ALIAS.has(aliasToken.key) &&
        !CLAUSES.has(aliasToken.key) &&
        tokens[cursor + 1]?.text !== "("
      ) {
        reference.alias = aliasToken.key;
        cursor += 1;
      }
      if (!shape.tables.some((table) => table.name === reference.name && table.alias === reference.alias)) {
        shape.tables.push(reference);
      }
      if (key === "from" && tokens[cursor]?.text === ",") {
        cursor += 1;
        continue;
      }
      break;
    }
  }
}

/** Comparisons in WHERE, ON and HAVING: lookups, filters, joins and literal states. */
function readConditions(tokens: SqlToken[], shape: StatementShape): void {
  let clause = "";
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index]!;
    if (token.kind === "word" && CLAUSES.has(token.key)) clause = token.key;
    if (token.kind === "word" && token.key === "case") clause = "case";
    if (clause !== "where" && clause !== "on" && clause !== "having" && clause !== "case") continue;
    // `lower(email) = lower(?)`: a lookup ignoring case is still a lookup by the column.
    const folded = readCaseFolded(tokens, index, readColumn);
    if (folded && tokens[folded.next]?.text === "=" && clause === "where") {
      const value = readValue(tokens, folded.next + 1) ?? readCaseFolded(tokens, folded.next + 1, readValue);
      if (value) {
        shape.filters.push({ column: folded.ref, operator: "=" });
        shape.equalities.push({ column: folded.ref, caseFolded: true });
        index = value.next - 1;
        continue;
      }
    }
    const left = readColumn(tokens, index);
    if (left) {
      const operator = tokens[left.next];
      const afterOperator = left.next + 1;
      if (operator && COMPARISON.has(operator.text)) {
        const rightColumn = readColumn(tokens, afterOperator);
        const value = readValue(tokens, afterOperator);
        if (rightColumn && operator.text === "=" && tokens[rightColumn.next]?.text !== "(") {
          shape.joins.push({ left: left.ref, right: rightColumn.ref });
        } else if (value) {
          if (clause !== "case") shape.filters.push({ column: left.ref, operator: operator.text });
          if ((operator.text === "=" || operator.text === "==") && clause !== "case" && clause !== "having") {
            shape.equalities.push({
              column: left.ref,
              ...(value.literal !== undefined ? { literal: value.literal } : {}),
            });
          }
          if (value.literal !== undefined) addLiteral(shape, left.ref, [value.literal]);
        }
        index = left.next - 1;
        continue;
      }
      const negated = operator?.key === "not";
      const verb = negated ? tokens[left.next + 1] : operator;
      if (verb?.key === "in" && tokens[negated ? left.next + 2 : afterOperator]?.text === "(") {
        const start = (negated ? left.next + 2 : afterOperator) + 1;
        const literals: string[] = [];
        let cursor = start;
        let allValues = true;
        while (cursor < tokens.length && tokens[cursor]!.text !== ")") {
          const item = tokens[cursor]!;
          if (item.kind === "string") literals.push(stripQuotes(item.text));
          else if (item.text !== "," && !isValue(item)) allValues = false;
          cursor += 1;
        }
        if (allValues && !negated) shape.filters.push({ column: left.ref, operator: "in" });
        if (literals.length > 0) addLiteral(shape, left.ref, literals);
      } else if (verb?.key === "between" && !negated) {
        shape.filters.push({ column: left.ref, operator: "between" });
      } else if ((verb?.key === "like" || verb?.key === "ilike") && !negated) {
        const pattern = tokens[negated ? left.next + 2 : afterOperator];
        // A leading wildcard cannot use an index anyway: not a missing-index signal.
        if (pattern?.kind === "parameter" || (pattern?.kind === "string" && !pattern.text.startsWith("'%"))) {
          shape.filters.push({ column: left.ref, operator: "like" });
        }
      }
      continue;
    }
    // `? = col` and `'x' = col`.
    const value = readValue(tokens, index);
    if (value && tokens[value.next] && COMPARISON.has(tokens[value.next]!.text)) {
      const right = readColumn(tokens, value.next + 1);
      if (right) {
        shape.filters.push({ column: right.ref, operator: tokens[value.next]!.text });
        if (tokens[value.next]!.text === "=") {
          shape.equalities.push({
            column: right.ref,
            ...(value.literal !== undefined ? { literal: value.literal } : {}),
          });
        }
        if (value.literal !== undefined) addLiteral(shape, right.ref, [value.literal]);
        index = right.next - 1;
      }
    }
  }
}

function addLiteral(shape: StatementShape, column: ColumnReference, values: string[]): void {
  const existing = shape.literalComparisons.find(
    (entry) => entry.column.column === column.column && entry.column.qualifier === column.qualifier,
  );
  if (existing) existing.values.push(...values.filter((value) => !existing.values.includes(value)));
  else shape.literalComparisons.push({ column, values: [...new Set(values)] });
}

const CASE_FOLDS = new Set(["lower", "upper", "lcase", "ucase"]);

/** `lower(<x>)` where `read` reads <x> (a column or a value): what it read, and where the call ends. */
function readCaseFolded<Read extends { next: number }>(
  tokens: SqlToken[],
  index: number,
  read: (tokens: SqlToken[], index: number) => Read | undefined,
): Read | undefined {
  const name = tokens[index];
  if (name?.kind !== "word" || !CASE_FOLDS.has(name.key) || tokens[index + 1]?.text !== "(") return undefined;
  const inner = read(tokens, index + 2);
  if (!inner || tokens[inner.next]?.text !== ")") return undefined;
  return { ...inner, next: inner.next + 1 };
}
