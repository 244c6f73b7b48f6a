import ts from "typescript";

// Small questions about TypeScript/JavaScript syntax trees that every route extractor asks.

export const HTTP_METHODS: Record<string, string> = {
  get: "GET",
  post: "POST",
  put: "PUT",
  patch: "PATCH",
  delete: "DELETE",
  del: "DELETE",
  options: "OPTIONS",
  head: "HEAD",
  all: "ALL",
};

export const UPPER_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]);

/** Strips parentheses, type assertions, `await` and `!`, which never change what a value is. */
export function unwrap(expression: ts.Expression): ts.Expression {
  let current = expression;
  for (;;) {
    if (
      ts.isParenthesizedExpression(current) ||
      ts.isAsExpression(current) ||
      ts.isSatisfiesExpression(current) ||
      ts.isNonNullExpression(current) ||
      ts.isTypeAssertionExpression(current) ||
      ts.isAwaitExpression(current)
    ) {
      current = current.expression;
    } else {
      return current;
    }
  }
}

/** The value of a string known at parse time: literals, templates and `+` of known parts, module consts. */
export function staticString(
  expression: ts.Expression | undefined,
  constants: ReadonlyMap<string, string>,
): string | undefined {
  if (!expression) return undefined;
  const node = unwrap(expression);
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isIdentifier(node)) return constants.get(node.text);
  // `route.path` where a loop over a literal table bound it (see loopExpansions).
  if (ts.isPropertyAccessExpression(node)) {
    const name = receiverName(node);
    return name === undefined ? undefined : constants.get(name);
  }
  if (ts.isTemplateExpression(node)) {
    let text = node.head.text;
    for (const span of node.templateSpans) {
      const part = staticString(span.expression, constants);
      if (part === undefined) return undefined;
      text += part + span.literal.text;
    }
    return text;
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = staticString(node.left, constants);
    const right = staticString(node.right, constants);
    return left !== undefined && right !== undefined ? left + right : undefined;
  }
  return undefined;
}

/** `const NAME = "literal"` anywhere in the file; a name bound twice is ambiguous and dropped. */
export function collectStringConstants(source: ts.SourceFile): Map<string, string> {
  const constants = new Map<string, string>();
  const ambiguous = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const list = node.parent;
      const isConst = ts.isVariableDeclarationList(list) && (list.flags & ts.NodeFlags.Const) !== 0;
      const value = isConst ? staticString(node.initializer, constants) : undefined;
      const name = node.name.text;
      if (value === undefined || constants.has(name)) {
        if (constants.has(name)) ambiguous.add(name);
      } else {
        constants.set(name, value);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  for (const name of ambiguous) constants.delete(name);
  return constants;
}

export function propertyOf(object: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const property of object.properties) {
    if (ts.isPropertyAssignment(property) && propertyName(property.name) === name)
      return property.initializer;
    if (ts.isShorthandPropertyAssignment(property) && property.name.text === name) return property.name;
  }
  return undefined;
}

export function propertyName(name: ts.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  if (ts.isNoSubstitutionTemplateLiteral(name)) return name.text;
  return undefined;
}

export function isFunctionNode(node: ts.Node): node is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node)
  );
}

export function lineOf(source: ts.SourceFile, node: ts.Node): number {
  return source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
}

/** `require("x")` → "x". */
export function requireSpecifier(expression: ts.Expression): string | undefined {
  const node = unwrap(expression);
  if (!ts.isCallExpression(node)) return undefined;
  const callee = node.expression;
  const isRequire = ts.isIdentifier(callee) && callee.text === "require";
  const isImport = callee.kind === ts.SyntaxKind.ImportKeyword;
  if (!isRequire && !isImport) return undefined;
  const first = node.arguments[0];
  return first && ts.isStringLiteralLike(first) ? first.text : undefined;
}

/** The text of a receiver made of identifiers and `this` (`app`, `this.router`), else undefined. */
export function receiverName(expression: ts.Expression): string | undefined {
  const node = unwrap(expression);
  if (ts.isIdentifier(node)) return node.text;
  if (node.kind === ts.SyntaxKind.ThisKeyword) return "this";
  if (ts.isPropertyAccessExpression(node)) {
    const base = receiverName(node.expression);
    return base === undefined ? undefined : `${base}.${node.name.text}`;
  }
  return undefined;
}

/** The leftmost identifier of `a.b.c(...)`. */
export function rootIdentifier(expression: ts.Expression): string | undefined {
  let node = unwrap(expression);
  for (;;) {
    if (ts.isIdentifier(node)) return node.text;
    if (ts.isPropertyAccessExpression(node) || ts.isCallExpression(node) || ts.isNewExpression(node)) {
      node = unwrap(node.expression);
    } else if (ts.isElementAccessExpression(node)) {
      node = unwrap(node.expression);
    } else {
      return undefined;
    }
  }
}

/** Methods named by a string or an array of strings (`"GET"`, `["GET", "POST"]`). */
export function methodList(
  expression: ts.Expression | undefined,
  constants: ReadonlyMap<string, string>,
): string[] {
  if (!expression) return [];
  const node = unwrap(expression);
  const values = ts.isArrayLiteralExpression(node)
    ? node.elements.map((element) => staticString(element, constants))
    : [staticString(node, constants)];
  return values
    .filter((value): value is string => value !== undefined)
    .map((value) => value.toUpperCase())
    .filter((value) => UPPER_METHODS.has(value) || value === "ALL" || value === "*");
}

export function numberValue(argument: ts.Expression | undefined): number | undefined {
  const value = argument && unwrap(argument);
  if (!value) return undefined;
  if (ts.isNumericLiteral(value)) return Number(value.text);
  if (
    ts.isPrefixUnaryExpression(value) &&
    value.operator === ts.SyntaxKind.MinusToken &&
    ts.isNumericLiteral(value.operand)
  )
    return -Number(value.operand.text);
  return undefined;
}

/** A literal's value: strings (and known constants), numbers, booleans, null. */
export function literalValue(argument: ts.Expression, constants: ReadonlyMap<string, string>): unknown {
  const value = unwrap(argument);
  const text = staticString(value, constants);
  if (text !== undefined) return text;
  const number = numberValue(value);
  if (number !== undefined) return number;
  if (value.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (value.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (value.kind === ts.SyntaxKind.NullKeyword) return null;
  return undefined;
}

export function regexSource(
  argument: ts.Expression | undefined,
  constants: ReadonlyMap<string, string>,
): string | undefined {
  const value = argument && unwrap(argument);
  if (!value) return undefined;
  if (ts.isRegularExpressionLiteral(value)) return value.text.slice(1, value.text.lastIndexOf("/"));
  if (ts.isNewExpression(value) && value.arguments?.[0]) return staticString(value.arguments[0], constants);
  return staticString(value, constants);
}
