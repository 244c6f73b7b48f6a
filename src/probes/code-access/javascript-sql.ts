import ts from "typescript";
import { lineOf, propertyName, unwrap } from "../routes/javascript-syntax.ts";
import type { Cardinality } from "./data-access-types.ts";
import { analyzeStatement } from "./sql-shape.ts";
import { looksLikeSql } from "./sql-tokens.ts";

// Reading SQL out of JS/TS: the text of string and template literals (interpolations become `?`), and how
// the code consumes the statement's result, judged from the call that takes the SQL and what follows it.

const SINGLE_CALLEE = new Set([
  "get",
  "one",
  "oneOrNone",
  "queryOne",
  "fetchOne",
  "maybeOne",
  "getOne",
  "selectOne",
  "querySingle",
  "queryFirst",
  "first",
]);
const MANY_CALLEE = new Set(["all", "many", "any", "manyOrNone", "each", "iterate"]);
const SINGLE_METHOD = new Set(["get", "first", "one", "oneOrNone", "takeFirst", "executeTakeFirst"]);
const MANY_METHOD = new Set(["all", "iterate", "many"]);
const WRITE_METHOD = new Set(["run", "exec"]);

/** The SQL text of an expression built from literals; non-literal parts become `?`. */
export function sqlTextOf(
  expression: ts.Node | undefined,
  sqlConstants: ReadonlyMap<string, string>,
  depth = 0,
): string | undefined {
  if (!expression || depth > 8) return undefined;
  const node = ts.isExpression(expression) ? unwrap(expression) : expression;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isIdentifier(node)) return sqlConstants.get(node.text);
  if (ts.isTemplateExpression(node)) {
    let text = node.head.text;
    for (const span of node.templateSpans) {
      const inner = sqlTextOf(span.expression, sqlConstants, depth + 1);
      // An interpolated fragment of SQL (`${where}`) is kept when known; a value becomes a placeholder.
      text += (inner !== undefined && !/^\s*$/.test(inner) ? inner : "?") + span.literal.text;
    }
    return text;
  }
  if (ts.isTaggedTemplateExpression(node)) return sqlTextOf(node.template, sqlConstants, depth + 1);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = sqlTextOf(node.left, sqlConstants, depth + 1);
    const right = sqlTextOf(node.right, sqlConstants, depth + 1);
    if (left === undefined && right === undefined) return undefined;
    return `${left ?? "?"}${right ?? "?"}`;
  }
  return undefined;
}

/** `const NAME = "SELECT …"` (also templates): statements kept in a variable before being run. */
export function collectSqlConstants(source: ts.SourceFile): Map<string, string> {
  const constants = new Map<string, string>();
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const text = sqlTextOf(node.initializer, constants);
      if (text !== undefined && looksLikeSql(text)) constants.set(node.name.text, text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return constants;
}

/** The enclosing function of a node as `name@line` (anonymous functions by their line). */
export function scopeOf(source: ts.SourceFile, node: ts.Node): string {
  let current: ts.Node | undefined = node.parent;
  while (current) {
    if (
      ts.isFunctionDeclaration(current) ||
      ts.isFunctionExpression(current) ||
      ts.isArrowFunction(current) ||
      ts.isMethodDeclaration(current)
    ) {
      return `${functionName(current) ?? "anonymous"}@${lineOf(source, current)}`;
    }
    current = current.parent;
  }
  return "module@0";
}

function functionName(node: ts.FunctionLikeDeclaration): string | undefined {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return propertyName(node.name as ts.PropertyName);
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent)) return propertyName(parent.name);
  return undefined;
}

/** The node whose value is the call's result once `await`, parentheses and `!` are looked through. */
export function resultUse(node: ts.Node): ts.Node {
  let current = node;
  while (
    current.parent &&
    (ts.isAwaitExpression(current.parent) ||
      ts.isParenthesizedExpression(current.parent) ||
      ts.isNonNullExpression(current.parent) ||
      ts.isAsExpression(current.parent))
  ) {
    current = current.parent;
  }
  return current;
}

/** How the code consumes a value (the result of a query call or of `await` on it). */
export function consumption(node: ts.Node): { cardinality: Cardinality; via: string } | undefined {
  const used = resultUse(node);
  const parent = used.parent;
  if (!parent) return undefined;
  if (ts.isPropertyAccessExpression(parent) && parent.expression === used) {
    const name = parent.name.text;
    const call = parent.parent;
    if (call && ts.isCallExpression(call) && call.expression === parent) {
      if (SINGLE_METHOD.has(name)) return { cardinality: "single", via: `.${name}()` };
      if (MANY_METHOD.has(name)) return { cardinality: "many", via: `.${name}()` };
      if (WRITE_METHOD.has(name)) return { cardinality: "write", via: `.${name}()` };
      return undefined;
    }
    if (name === "rows") {
      const rowsUse = resultUse(parent);
      const element = rowsUse.parent;
      if (element && ts.isElementAccessExpression(element) && isZero(element.argumentExpression)) {
        return { cardinality: "single", via: ".rows[0]" };
      }
      return { cardinality: "many", via: ".rows" };
    }
    return undefined;
  }
  if (
    ts.isElementAccessExpression(parent) &&
    parent.expression === used &&
    isZero(parent.argumentExpression)
  ) {
    return { cardinality: "single", via: "[0]" };
  }
  if (ts.isVariableDeclaration(parent) && parent.initializer === used) {
    if (ts.isArrayBindingPattern(parent.name) && parent.name.elements.length === 1) {
      return { cardinality: "single", via: "const [row] =" };
    }
    if (ts.isObjectBindingPattern(parent.name)) {
      const rows = parent.name.elements.find(
        (element) => (element.propertyName ?? element.name).getText() === "rows",
      );
      if (rows && ts.isArrayBindingPattern(rows.name) && rows.name.elements.length === 1) {
        return { cardinality: "single", via: "{ rows: [row] } =" };
      }
    }
  }
  return undefined;
}

/** The name a value is kept under: `const x = …`, `{ x: … }`, `this.x = …`. */
function boundName(node: ts.Node): string | undefined {
  const parent = node.parent;
  if (!parent) return undefined;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && parent.initializer === node) return propertyName(parent.name);
  if (
    ts.isBinaryExpression(parent) &&
    parent.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
    parent.right === node &&
    ts.isPropertyAccessExpression(parent.left)
  ) {
    return parent.left.name.text;
  }
  return undefined;
}

function isZero(expression: ts.Expression): boolean {
  return ts.isNumericLiteral(expression) && expression.text === "0";
}

export interface SqlCall {
  sql: string;
  node: ts.Node;
  cardinality: Cardinality;
  via: string;
  /** `const stmt = db.prepare(sql)`: later `stmt.get()` calls decide the cardinality. */
  statementVariable?: string;
}

/** A call (or tagged template) that carries SQL as an argument, and how its result is consumed. */
export function sqlCallOf(node: ts.Node, sqlConstants: ReadonlyMap<string, string>): SqlCall | undefined {
  let sql: string | undefined;
  let callee: string | undefined;
  if (ts.isCallExpression(node)) {
    for (const argument of node.arguments.slice(0, 2)) {
      const text = sqlTextOf(argument, sqlConstants);
      if (text !== undefined && looksLikeSql(text)) {
        sql = text;
        break;
      }
    }
    const expression = unwrap(node.expression);
    callee = ts.isPropertyAccessExpression(expression)
      ? expression.name.text
      : ts.isIdentifier(expression)
        ? expression.text
        : undefined;
  } else if (ts.isTaggedTemplateExpression(node)) {
    const text = sqlTextOf(node.template, sqlConstants);
    if (text !== undefined && looksLikeSql(text)) sql = text;
    const tag = unwrap(node.tag);
    callee = ts.isPropertyAccessExpression(tag) ? tag.name.text : ts.isIdentifier(tag) ? tag.text : undefined;
  }
  if (sql === undefined) return undefined;
  const shape = analyzeStatement(sql);
  const isWrite = shape.verb === "insert" || shape.verb === "update" || shape.verb === "delete";
  let decided: { cardinality: Cardinality; via: string } | undefined;
  if (callee && SINGLE_CALLEE.has(callee)) decided = { cardinality: "single", via: `${callee}()` };
  else if (callee && MANY_CALLEE.has(callee)) decided = { cardinality: "many", via: `${callee}()` };
  decided ??= consumption(node);
  let statementVariable: string | undefined;
  const used = resultUse(node);
  if (!decided) statementVariable = boundName(used);
  if (!decided && shape.limitOne) decided = { cardinality: "single", via: "LIMIT 1" };
  if (!decided && isWrite) decided = { cardinality: "write", via: "statement" };
  return {
    sql,
    node,
    cardinality: decided?.cardinality ?? "unknown",
    via: decided?.via ?? "unknown",
    ...(statementVariable ? { statementVariable } : {}),
  };
}
