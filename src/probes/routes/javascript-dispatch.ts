import ts from "typescript";
import {
  isFunctionNode,
  propertyName,
  propertyOf,
  staticString,
  UPPER_METHODS,
  unwrap,
} from "./javascript-syntax.ts";
import { normalizePathTemplate, regexToTemplate } from "./path-template.ts";

// Hand-written dispatch inside a plain `http.createServer` handler or an `upgrade` listener: comparisons of
// the request path with literals, `"GET /x"` keys, regular expressions tested against the URL.

export interface DispatchedPath {
  method: string;
  path: string;
  line: number;
  /** What serves the path: a handler named in a table, or the branch of the function that compared it. */
  target?: { handler: ts.Expression } | { within: ts.FunctionLikeDeclaration; branch: ts.Node };
}

const PATH_LIKE = /url|path|route|pathname|endpoint/i;
const METHOD_LIKE = /method|verb/i;
const METHOD_AND_PATH = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(\/\S*)$/;

/** Paths a request handler dispatches on, following calls to other functions of the same file once. */
export function dispatchedPaths(
  handler: ts.Node,
  source: ts.SourceFile,
  functions: ReadonlyMap<string, ts.FunctionLikeDeclaration>,
  constants: ReadonlyMap<string, string>,
  objects: ReadonlyMap<string, ts.ObjectLiteralExpression | ts.ArrayLiteralExpression>,
): DispatchedPath[] {
  const found: DispatchedPath[] = [];
  const visited = new Set<ts.Node>();
  const line = (node: ts.Node): number =>
    source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  let within: ts.FunctionLikeDeclaration | undefined;
  const add = (
    method: string,
    path: string,
    node: ts.Node,
    handler?: ts.Expression,
    guarded?: ts.Node,
  ): void => {
    const branch = handler ? undefined : (guarded ?? branchOf(node));
    const target = handler ? { handler } : within && branch ? { within, branch } : undefined;
    found.push({ method, path, line: line(node), ...(target ? { target } : {}) });
  };

  const inspectObject = (object: ts.ObjectLiteralExpression): void => {
    for (const property of object.properties) {
      if (!ts.isPropertyAssignment(property)) continue;
      const key = propertyName(property.name);
      if (key === undefined) continue;
      const pair = METHOD_AND_PATH.exec(key);
      if (pair)
        add(pair[1] ?? "ALL", normalizePathTemplate(pair[2] ?? "/", "colon"), property, property.initializer);
      else if (key.startsWith("/"))
        add("ALL", normalizePathTemplate(key, "colon"), property, property.initializer);
    }
  };

  /** `[["GET", /^\/items\/(\d+)$/, getItem], …]` or `[{ method: "GET", path: "/items", handler }, …]`. */
  const inspectArray = (array: ts.ArrayLiteralExpression): void => {
    for (const element of array.elements) {
      const entry = tableEntry(unwrap(element), constants);
      if (entry) add(entry.method, entry.path, element, entry.handler);
    }
  };

  const walk = (node: ts.Node, depth: number): void => {
    if (visited.has(node)) return;
    visited.add(node);
    if (isFunctionNode(node)) within = node;
    const visit = (child: ts.Node): void => {
      if (ts.isBinaryExpression(child) && isEquality(child.operatorToken.kind)) {
        const literal = literalSide(child, constants);
        if (literal) {
          const pair = METHOD_AND_PATH.exec(literal.value);
          if (pair) add(pair[1] ?? "ALL", normalizePathTemplate(pair[2] ?? "/", "colon"), child);
          else if (literal.value.startsWith("/") && PATH_LIKE.test(literal.other.getText(source))) {
            add(methodAround(child, source, constants), normalizePathTemplate(literal.value, "colon"), child);
          }
        }
      } else if (ts.isBinaryExpression(child) && isInequality(child.operatorToken.kind)) {
        // A guard clause (`if (pathname !== "/ws") return;`): what follows it serves that path. Listeners
        // sharing one server (ws's `upgrade` events, several `request` handlers) are written this way.
        const literal = literalSide(child, constants);
        const rest = literal ? afterGuard(child) : undefined;
        if (
          literal &&
          rest &&
          literal.value.startsWith("/") &&
          PATH_LIKE.test(literal.other.getText(source))
        ) {
          add(
            methodAround(child, source, constants),
            normalizePathTemplate(literal.value, "colon"),
            child,
            undefined,
            rest,
          );
        }
      } else if (ts.isCaseClause(child)) {
        const value = staticString(child.expression, constants);
        const switched = child.parent.parent.expression.getText(source);
        const pair = value ? METHOD_AND_PATH.exec(value) : null;
        if (pair) add(pair[1] ?? "ALL", normalizePathTemplate(pair[2] ?? "/", "colon"), child);
        else if (value?.startsWith("/") && PATH_LIKE.test(switched)) {
          add(methodAround(child, source, constants), normalizePathTemplate(value, "colon"), child);
        }
      } else if (ts.isCallExpression(child) && ts.isPropertyAccessExpression(child.expression)) {
        inspectCall(child, child.expression);
      } else if (ts.isObjectLiteralExpression(child)) {
        inspectObject(child);
      } else if (ts.isArrayLiteralExpression(child)) {
        inspectArray(child);
      } else if (ts.isIdentifier(child)) {
        const table = objects.get(child.text);
        if (table && ts.isObjectLiteralExpression(table)) inspectObject(table);
        if (table && ts.isArrayLiteralExpression(table)) inspectArray(table);
      }
      ts.forEachChild(child, visit);
    };
    const inspectCall = (call: ts.CallExpression, callee: ts.PropertyAccessExpression): void => {
      const name = callee.name.text;
      const target = callee.expression.getText(source);
      const first = call.arguments[0];
      if (name === "startsWith" && PATH_LIKE.test(target)) {
        const prefix = staticString(first, constants);
        if (prefix?.startsWith("/")) {
          // A prefix ending in `/` is dispatch on what follows it, almost always an id.
          const path = prefix.length > 1 && prefix.endsWith("/") ? `${prefix}{param}` : prefix;
          add(methodAround(call, source, constants), normalizePathTemplate(path, "colon"), call);
        }
      }
      const regex = [callee.expression, first].find(
        (candidate) => candidate && ts.isRegularExpressionLiteral(unwrap(candidate as ts.Expression)),
      );
      const other = regex === callee.expression ? first : callee.expression;
      if (
        regex &&
        other &&
        (name === "test" || name === "match" || name === "exec") &&
        PATH_LIKE.test(other.getText(source))
      ) {
        const body = unwrap(regex as ts.Expression).getText(source);
        const pattern = body.slice(1, body.lastIndexOf("/"));
        if (pattern.startsWith("^\\/") || pattern.startsWith("\\/")) {
          add(
            methodAround(call, source, constants),
            normalizePathTemplate(regexToTemplate(pattern), "brace"),
            call,
          );
        }
      }
    };
    ts.forEachChild(node, visit);
    if (depth > 0) return;
    // One level into helpers the handler calls (`route(req, res)`), where the dispatch often lives.
    const callees = new Set<string>();
    const collect = (child: ts.Node): void => {
      if (ts.isCallExpression(child) && ts.isIdentifier(child.expression)) callees.add(child.expression.text);
      ts.forEachChild(child, collect);
    };
    collect(node);
    for (const callee of callees) {
      const target = functions.get(callee);
      if (target && target !== handler) walk(target, depth + 1);
    }
    within = isFunctionNode(handler) ? handler : undefined;
  };
  walk(handler, 0);
  return dedupe(found);
}

/** The function a handler argument denotes: inline, or a function of this file named by it. */
export function handlerFunction(
  argument: ts.Expression | undefined,
  functions: ReadonlyMap<string, ts.FunctionLikeDeclaration>,
): ts.Node | undefined {
  if (!argument) return undefined;
  const value = unwrap(argument);
  if (isFunctionNode(value)) return value;
  if (ts.isIdentifier(value)) return functions.get(value.text);
  return undefined;
}

/** The statement a path comparison guards: the `if`'s then-branch, the `case`'s clause, the `?:`'s true side. */
function branchOf(node: ts.Node): ts.Node | undefined {
  if (ts.isCaseClause(node)) return node;
  let current: ts.Node = node;
  while (current.parent && !isFunctionNode(current)) {
    const parent: ts.Node = current.parent;
    if (ts.isIfStatement(parent) && parent.expression === current) return parent.thenStatement;
    if (ts.isConditionalExpression(parent) && parent.condition === current) return parent.whenTrue;
    if (ts.isCaseClause(parent)) return parent;
    current = parent;
  }
  return undefined;
}

/** One row of a dispatch table: a method, a path or regular expression, and the handler. */
function tableEntry(
  element: ts.Expression,
  constants: ReadonlyMap<string, string>,
): { method: string; path: string; handler?: ts.Expression } | undefined {
  let method: ts.Expression | undefined;
  let pattern: ts.Expression | undefined;
  let handler: ts.Expression | undefined;
  if (ts.isArrayLiteralExpression(element) && element.elements.length >= 2) {
    [method, pattern, handler] = element.elements;
  } else if (ts.isObjectLiteralExpression(element)) {
    method = propertyOf(element, "method") ?? propertyOf(element, "verb");
    pattern =
      propertyOf(element, "path") ??
      propertyOf(element, "pattern") ??
      propertyOf(element, "url") ??
      propertyOf(element, "route");
    handler = propertyOf(element, "handler") ?? propertyOf(element, "fn") ?? propertyOf(element, "action");
  }
  const verb = staticString(method, constants)?.toUpperCase();
  if (!verb || !(UPPER_METHODS.has(verb) || verb === "*" || verb === "ALL") || !pattern) return undefined;
  const value = unwrap(pattern);
  let path: string | undefined;
  if (ts.isRegularExpressionLiteral(value)) {
    const body = value.text.slice(1, value.text.lastIndexOf("/"));
    if (body.startsWith("^\\/") || body.startsWith("\\/"))
      path = normalizePathTemplate(regexToTemplate(body), "brace");
  } else {
    const text = staticString(value, constants);
    if (text?.startsWith("/")) path = normalizePathTemplate(text, "colon");
  }
  return path ? { method: verb === "*" ? "ALL" : verb, path, handler } : undefined;
}

function isEquality(kind: ts.SyntaxKind): boolean {
  return kind === ts.SyntaxKind.EqualsEqualsEqualsToken || kind === ts.SyntaxKind.EqualsEqualsToken;
}

function isInequality(kind: ts.SyntaxKind): boolean {
  return kind === ts.SyntaxKind.ExclamationEqualsEqualsToken || kind === ts.SyntaxKind.ExclamationEqualsToken;
}

/**
 * When `comparison` is the whole condition of an `if` that leaves the function (its branch ends in
 * `return` or `throw`, with no `else`), the block the `if` stands in: the code that runs only when the
 * comparison is false. Any other use of `!==` is not dispatch.
 */
function afterGuard(comparison: ts.BinaryExpression): ts.Node | undefined {
  let condition: ts.Node = comparison;
  while (ts.isParenthesizedExpression(condition.parent)) condition = condition.parent;
  const statement = condition.parent;
  if (!ts.isIfStatement(statement) || statement.expression !== condition || statement.elseStatement)
    return undefined;
  const then = statement.thenStatement;
  const last = ts.isBlock(then) ? then.statements[then.statements.length - 1] : then;
  if (!last || !(ts.isReturnStatement(last) || ts.isThrowStatement(last))) return undefined;
  return ts.isBlock(statement.parent) || ts.isSourceFile(statement.parent) ? statement.parent : undefined;
}

function literalSide(
  node: ts.BinaryExpression,
  constants: ReadonlyMap<string, string>,
): { value: string; other: ts.Expression } | undefined {
  const right = staticString(node.right, constants);
  if (right !== undefined) return { value: right, other: node.left };
  const left = staticString(node.left, constants);
  if (left !== undefined) return { value: left, other: node.right };
  return undefined;
}

/** The method a path comparison is guarded by: `req.method === "POST" && …`, an enclosing `if` or `case`. */
function methodAround(node: ts.Node, source: ts.SourceFile, constants: ReadonlyMap<string, string>): string {
  let current: ts.Node = node;
  while (current.parent && !isFunctionNode(current)) {
    const parent: ts.Node = current.parent;
    const candidates: ts.Node[] = [];
    if (
      ts.isBinaryExpression(parent) &&
      parent.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken
    ) {
      candidates.push(parent.left, parent.right);
    }
    if (ts.isIfStatement(parent) && parent.thenStatement === current) candidates.push(parent.expression);
    if (ts.isCaseClause(parent) && METHOD_LIKE.test(parent.parent.parent.expression.getText(source))) {
      const value = staticString(parent.expression, constants)?.toUpperCase();
      if (value && UPPER_METHODS.has(value)) return value;
    }
    for (const candidate of candidates) {
      const method = methodComparedIn(candidate, source, constants);
      if (method) return method;
    }
    current = parent;
  }
  return "ALL";
}

function methodComparedIn(
  node: ts.Node,
  source: ts.SourceFile,
  constants: ReadonlyMap<string, string>,
): string | undefined {
  if (ts.isBinaryExpression(node) && isEquality(node.operatorToken.kind)) {
    const literal = literalSide(node, constants);
    const value = literal?.value.toUpperCase();
    if (literal && value && UPPER_METHODS.has(value) && METHOD_LIKE.test(literal.other.getText(source)))
      return value;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken) {
    return methodComparedIn(node.left, source, constants) ?? methodComparedIn(node.right, source, constants);
  }
  if (ts.isParenthesizedExpression(node)) return methodComparedIn(node.expression, source, constants);
  return undefined;
}

function dedupe(paths: DispatchedPath[]): DispatchedPath[] {
  const seen = new Set<string>();
  return paths.filter((entry) => {
    const key = `${entry.method} ${entry.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
