import ts from "typescript";
import { receiverName, staticString, unwrap } from "./javascript-syntax.ts";
import { joinPaths } from "./path-template.ts";

// What a route call is made on: the receiver behind a call chain, and the name a function containing
// routes is known by from outside its file.

export interface ReceiverChain {
  receiver: string;
  /** Express `app.route("/x").get(…)`. */
  routePath?: string;
  /** Hono `app.basePath("/api").get(…)`, outermost last. */
  basePaths: string[];
}

/** Walks `app.route("/x").get(h).post(h)` and `app.basePath("/v1").get(…)` down to the receiver. */
export function receiverChain(expression: ts.Expression): ReceiverChain | undefined {
  const basePaths: string[] = [];
  let routePath: string | undefined;
  let node = unwrap(expression);
  while (ts.isCallExpression(node) && ts.isPropertyAccessExpression(unwrap(node.expression))) {
    const callee = unwrap(node.expression) as ts.PropertyAccessExpression;
    const first = node.arguments[0];
    const literal = first ? staticString(first, new Map()) : undefined;
    if (callee.name.text === "route" && node.arguments.length === 1 && literal !== undefined)
      routePath ??= literal;
    if (callee.name.text === "basePath" && literal !== undefined) basePaths.unshift(literal);
    node = unwrap(callee.expression);
  }
  const receiver = receiverName(node);
  return receiver === undefined ? undefined : { receiver, routePath, basePaths };
}

export function joinAll(basePaths: string[], path: string): string {
  return [...basePaths, path].reduce((left, right) => (left === "" ? right : joinPaths(left, right)), "");
}

/**
 * The name a function is known by from outside: its own name, the variable or export it is assigned to,
 * or the position of an inline plugin. `collectBindings` names exports the same way.
 */
export function functionKey(fn: ts.Node): string {
  if ((ts.isFunctionDeclaration(fn) || ts.isFunctionExpression(fn)) && fn.name) return fn.name.text;
  if (ts.isFunctionDeclaration(fn)) return "default";
  let current: ts.Node = fn;
  for (let step = 0; step < 4; step += 1) {
    const parent = current.parent;
    if (!parent) break;
    if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
    if (ts.isExportAssignment(parent)) return "default";
    if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
    if (ts.isMethodDeclaration(fn) && ts.isIdentifier(fn.name)) return fn.name.text;
    if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      const target = parent.left.getText();
      if (target === "module.exports") return "default";
      const named = /exports\.([A-Za-z_$][\w$]*)$/.exec(target);
      if (named?.[1]) return named[1];
    }
    // A wrapper call (`fp(fn)`) passes the name through; any other call makes the function inline.
    if (ts.isCallExpression(parent) && !ts.isPropertyAccessExpression(parent.expression)) {
      current = parent;
      continue;
    }
    break;
  }
  return `inline@${fn.pos}`;
}
