import ts from "typescript";
import { calleeName } from "./evaluate.ts";

/**
 * Names HTTP clients' own methods carry: a wrapper method with one of these names is only followed to
 * calls the checker resolves to it, never by name (`this.http.get` is not a call of `UserService.get`).
 */
const CLIENT_METHODS = new Set([
  "get",
  "post",
  "put",
  "patch",
  "delete",
  "head",
  "options",
  "request",
  "fetch",
  "open",
  "send",
  "ajax",
]);

// Every call in the program by the name it calls (`fetch`, `get`, `request`…), built once: the reader finds
// the calls that send requests, and the callers of a wrapper function whose arguments make its URL.

export class CallIndex {
  private readonly byName = new Map<string, ts.CallExpression[]>();
  /** How many functions (declarations, methods, assigned functions) carry each name. */
  private readonly functionNames = new Map<string, number>();

  constructor(
    files: readonly ts.SourceFile[],
    private readonly checker: ts.TypeChecker,
  ) {
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const name = calleeName(node.expression);
        if (name) {
          const list = this.byName.get(name);
          if (list) list.push(node);
          else this.byName.set(name, [node]);
        }
      }
      if (ts.isFunctionLike(node)) {
        const name = functionNameNode(node)?.getText();
        if (name) this.functionNames.set(name, (this.functionNames.get(name) ?? 0) + 1);
      }
      ts.forEachChild(node, visit);
    };
    for (const file of files) visit(file);
  }

  named(name: string): readonly ts.CallExpression[] {
    return this.byName.get(name) ?? [];
  }

  all(): IterableIterator<[string, ts.CallExpression[]]> {
    return this.byName.entries();
  }

  /**
   * The calls of a function: those whose callee resolves to it. A method (or a function stored in a
   * property) is also called through receivers the checker cannot type in plain JavaScript
   * (`this.api.post(...)`): those calls count when no other function carries the name.
   */
  callersOf(fn: ts.SignatureDeclaration): ts.CallExpression[] {
    const nameNode = functionNameNode(fn);
    if (!nameNode) return [];
    const name = nameNode.getText();
    const target = this.symbolAt(nameNode);
    const holder = nameNode.parent;
    const member =
      ts.isMethodDeclaration(fn) ||
      ts.isPropertyAssignment(holder) ||
      ts.isPropertyDeclaration(holder) ||
      ts.isPropertyAccessExpression(holder);
    const unique =
      member && (this.functionNames.get(name) ?? 0) === 1 && name.length >= 3 && !CLIENT_METHODS.has(name);
    const variadic = fn.parameters.some((parameter) => parameter.dotDotDotToken);
    return this.named(name).filter((call) => {
      // A function calling itself, or a call passing more than it takes, is not the caller being looked for.
      if (call.pos >= fn.pos && call.end <= fn.end) return false;
      if (!variadic && call.arguments.length > fn.parameters.length) return false;
      const property = ts.isPropertyAccessExpression(call.expression);
      const callee = property ? (call.expression as ts.PropertyAccessExpression).name : call.expression;
      const symbol = this.symbolAt(callee);
      if (symbol && target) return symbol === target;
      return property && unique;
    });
  }

  private symbolAt(node: ts.Node): ts.Symbol | undefined {
    try {
      let symbol = this.checker.getSymbolAtLocation(node);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
      return symbol;
    } catch {
      return undefined;
    }
  }
}

/** The name a function is called by: its own, or that of the variable, property or method holding it. */
export function functionNameNode(fn: ts.Node): ts.Node | undefined {
  if ((ts.isFunctionDeclaration(fn) || ts.isMethodDeclaration(fn)) && fn.name) return fn.name;
  if (ts.isFunctionExpression(fn) && fn.name) return fn.name;
  if (ts.isArrowFunction(fn) || ts.isFunctionExpression(fn)) {
    const parent = fn.parent;
    if (
      (ts.isVariableDeclaration(parent) ||
        ts.isPropertyAssignment(parent) ||
        ts.isPropertyDeclaration(parent)) &&
      parent.initializer === fn
    )
      return parent.name;
    if (
      ts.isBinaryExpression(parent) &&
      parent.right === fn &&
      parent.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(parent.left)
    )
      return parent.left.name;
  }
  return undefined;
}
