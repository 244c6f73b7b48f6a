import { isName, isValue, readColumn, stripQuotes } from "./sql-reading.ts";
import type { Assignment, StatementShape } from "./sql-shape.ts";
import type { SqlToken } from "./sql-tokens.ts";

// The clauses of a statement that say what it writes: SET assignments (and whether a decrement is bounded
// in WHERE), INSERT columns and literal values, and whether a SELECT list is only aggregates.

const AGGREGATES = new Set([
  "count",
  "sum",
  "min",
  "max",
  "avg",
  "total",
  "group_concat",
  "string_agg",
  "exists",
]);
const WRAPPERS = new Set(["coalesce", "ifnull", "nullif", "isnull", "nvl", "round", "abs", "cast"]);

/** `SET a = a - ?, b = 'x'`, and whether a decrement is guarded in WHERE (`a >= ?`). */
export function readAssignments(tokens: SqlToken[], shape: StatementShape): void {
  if (shape.verb !== "update") return;
  const setIndex = tokens.findIndex((token) => token.key === "set");
  if (setIndex < 0) return;
  const whereIndex = tokens.findIndex((token, index) => index > setIndex && token.key === "where");
  const end = tokens.findIndex(
    (token, index) =>
      index > setIndex && (token.key === "where" || token.key === "returning" || token.key === "from"),
  );
  const stop = end < 0 ? tokens.length : end;
  const whereTokens = whereIndex < 0 ? [] : tokens.slice(whereIndex + 1);
  let cursor = setIndex + 1;
  while (cursor < stop) {
    const target = readColumn(tokens, cursor);
    if (!target || tokens[target.next]?.text !== "=") break;
    let depth = 0;
    let expressionEnd = target.next + 1;
    while (expressionEnd < stop) {
      const text = tokens[expressionEnd]!.text;
      if (text === "(") depth += 1;
      else if (text === ")") depth -= 1;
      else if (text === "," && depth === 0) break;
      expressionEnd += 1;
    }
    const expression = tokens.slice(target.next + 1, expressionEnd);
    shape.assignments.push(assignmentOf(target.ref.column, expression, whereTokens));
    cursor = expressionEnd + 1;
  }
}

function assignmentOf(column: string, expression: SqlToken[], whereTokens: SqlToken[]): Assignment {
  const names = expression.filter((token) => token.kind === "word" || token.kind === "quoted");
  const selfReference = expression.findIndex((token) => token.key === column);
  if (expression.length === 1 && expression[0]!.kind === "string") {
    return { column, kind: "value", literal: stripQuotes(expression[0]!.text) };
  }
  if (expression.length === 1 && isValue(expression[0])) return { column, kind: "value" };
  const simpleArithmetic =
    selfReference === 0 &&
    expression.length === 3 &&
    names.length === 1 &&
    (expression[1]!.text === "-" || expression[1]!.text === "+") &&
    isValue(expression[2]);
  if (simpleArithmetic) {
    const kind = expression[1]!.text === "-" ? "decrement" : "increment";
    return { column, kind, guarded: kind === "decrement" && isGuarded(column, whereTokens) };
  }
  return { column, kind: "expression" };
}

/** `WHERE … stock >= ?`, `stock > 0`, `stock - ? >= 0`: the decrement cannot go below the bound. */
function isGuarded(column: string, whereTokens: SqlToken[]): boolean {
  for (let index = 0; index < whereTokens.length; index += 1) {
    if (whereTokens[index]!.key !== column) continue;
    let cursor = index + 1;
    if (whereTokens[cursor]?.text === "-" && isValue(whereTokens[cursor + 1])) cursor += 2;
    const operator = whereTokens[cursor]?.text;
    if (operator === ">=" || operator === ">") return true;
  }
  return false;
}

export function readInsert(tokens: SqlToken[], shape: StatementShape): void {
  if (shape.verb !== "insert") return;
  const into = tokens.findIndex((token) => token.key === "into");
  if (into < 0) return;
  let cursor = into + 1;
  while (cursor < tokens.length && tokens[cursor]!.text !== "(" && tokens[cursor]!.key !== "values")
    cursor += 1;
  if (tokens[cursor]?.text !== "(") return;
  cursor += 1;
  while (cursor < tokens.length && tokens[cursor]!.text !== ")") {
    if (isName(tokens[cursor]) || tokens[cursor]!.kind === "word")
      shape.insertColumns.push(tokens[cursor]!.key);
    cursor += 1;
  }
  const values = tokens.findIndex((token, index) => index > cursor && token.key === "values");
  if (values < 0 || tokens[values + 1]?.text !== "(") return;
  let position = 0;
  let depth = 0;
  let item: SqlToken[] = [];
  for (let index = values + 2; index < tokens.length; index += 1) {
    const token = tokens[index]!;
    if (token.text === "(") depth += 1;
    if (token.text === ")" && depth === 0) {
      recordInsertLiteral(shape, position, item);
      break;
    }
    if (token.text === ")") depth -= 1;
    if (token.text === "," && depth === 0) {
      recordInsertLiteral(shape, position, item);
      position += 1;
      item = [];
      continue;
    }
    item.push(token);
  }
}

function recordInsertLiteral(shape: StatementShape, position: number, item: SqlToken[]): void {
  const column = shape.insertColumns[position];
  if (column && item.length === 1 && item[0]!.kind === "string") {
    shape.insertLiterals[column] = stripQuotes(item[0]!.text);
  }
}

export function readSelectList(tokens: SqlToken[], shape: StatementShape): void {
  if (shape.verb !== "select") return;
  const start = tokens.findIndex((token) => token.key === "select");
  if (start < 0) return;
  let depth = 0;
  const items: SqlToken[][] = [[]];
  for (let index = start + 1; index < tokens.length; index += 1) {
    const token = tokens[index]!;
    if (token.text === "(") depth += 1;
    else if (token.text === ")") depth -= 1;
    if (depth === 0 && token.key === "from") break;
    if (depth === 0 && token.text === ",") {
      items.push([]);
      continue;
    }
    items[items.length - 1]!.push(token);
  }
  shape.aggregateOnly =
    items.length > 0 &&
    items.every((item) => {
      const head = item.find((token) => token.key !== "distinct");
      if (!head) return false;
      if (isValue(head) && item.length <= 3) return true;
      if (AGGREGATES.has(head.key) && item[item.indexOf(head) + 1]?.text === "(") return true;
      // `COALESCE(MAX(n), 0) + 1`: an aggregate wrapped in a scalar function is still one value.
      return (
        WRAPPERS.has(head.key) &&
        item.some((token, index) => AGGREGATES.has(token.key) && item[index + 1]?.text === "(")
      );
    });
}
