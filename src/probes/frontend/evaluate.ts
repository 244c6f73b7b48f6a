import ts from "typescript";

// A small partial evaluator over frontend code: what an expression is when it can be known (a string, a
// template with holes, an object literal), and a named hole when it cannot. It follows constants, object
// properties, `this.field` initialisers, imports and (through `Env`) the arguments a wrapper function was
// called with; it never runs anything.

export type Part = { literal: string } | { hole: string };

export type Value =
  | { kind: "text"; parts: Part[] }
  | { kind: "number"; text: string }
  | { kind: "boolean" }
  | { kind: "object"; node: ts.ObjectLiteralExpression }
  | { kind: "array"; node: ts.ArrayLiteralExpression }
  /** `new FormData(...)`, `new URLSearchParams(...)`… */
  | { kind: "new"; constructor: string; node: ts.NewExpression }
  /** A call not understood here (`JSON.stringify(x)`, `axios.create(...)`), for callers that know it. */
  | { kind: "call"; name: string; node: ts.CallExpression }
  | { kind: "unknown"; name: string };

/** The arguments of the wrapper calls being followed: a parameter → the expression passed for it. */
export type Env = ReadonlyMap<ts.ParameterDeclaration, ts.Expression | undefined>;

export const EMPTY_ENV: Env = new Map();

const MAX_DEPTH = 24;
const PASS_THROUGH = new Set(["encodeURIComponent", "encodeURI", "String", "escape", "decodeURIComponent"]);
const SAME_TEXT_METHODS = new Set([
  "toString",
  "trim",
  "toLowerCase",
  "toUpperCase",
  "replace",
  "replaceAll",
]);

export class Evaluator {
  /** Parameters met without a binding in the current evaluation: the wrapper's callers would say. */
  unbound = new Set<ts.ParameterDeclaration>();
  private depth = 0;

  constructor(readonly checker: ts.TypeChecker) {}

  evaluate(expression: ts.Expression, env: Env): Value {
    if (this.depth > MAX_DEPTH) return unknown(nameOf(expression));
    this.depth += 1;
    try {
      return this.evaluateInner(skipOuter(expression), env);
    } finally {
      this.depth -= 1;
    }
  }

  /** The expression as text parts; anything else becomes one hole named after it. */
  text(expression: ts.Expression, env: Env): Part[] {
    return partsOf(this.evaluate(expression, env), expression);
  }

  /** The value of an object literal's property `name` (spreads included), or undefined when absent. */
  property(object: ts.ObjectLiteralExpression, name: string, env: Env): Value | undefined {
    const expression = this.propertyExpression(object, name, env);
    return expression === undefined ? undefined : this.evaluate(expression, env);
  }

  propertyExpression(object: ts.ObjectLiteralExpression, name: string, env: Env): ts.Expression | undefined {
    for (const property of [...object.properties].reverse()) {
      if (ts.isSpreadAssignment(property)) {
        const spread = this.evaluate(property.expression, env);
        const inner = spread.kind === "object" ? this.propertyExpression(spread.node, name, env) : undefined;
        if (inner) return inner;
        continue;
      }
      if (propertyName(property) !== name) continue;
      if (ts.isPropertyAssignment(property)) return property.initializer;
      if (ts.isShorthandPropertyAssignment(property)) return property.name;
    }
    return undefined;
  }

  /** Declarations of what a name or property refers to, through import aliases. */
  declarationsOf(node: ts.Node): ts.Declaration[] {
    let symbol: ts.Symbol | undefined;
    try {
      symbol =
        ts.isShorthandPropertyAssignment(node.parent) && node.parent.name === node
          ? this.checker.getShorthandAssignmentValueSymbol(node.parent)
          : this.checker.getSymbolAtLocation(node);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    } catch {
      return [];
    }
    return symbol?.declarations ?? [];
  }

  private evaluateInner(node: ts.Expression, env: Env): Value {
    if (ts.isStringLiteralLike(node)) return { kind: "text", parts: [{ literal: node.text }] };
    if (ts.isNumericLiteral(node)) return { kind: "number", text: node.text };
    if (node.kind === ts.SyntaxKind.TrueKeyword || node.kind === ts.SyntaxKind.FalseKeyword)
      return { kind: "boolean" };
    // Minifiers write `!0` and `!1` for true and false.
    if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken)
      return { kind: "boolean" };
    if (ts.isTemplateExpression(node)) {
      const parts: Part[] = [{ literal: node.head.text }];
      for (const span of node.templateSpans) {
        parts.push(...this.text(span.expression, env), { literal: span.literal.text });
      }
      return { kind: "text", parts: compact(parts) };
    }
    if (ts.isObjectLiteralExpression(node)) return { kind: "object", node };
    if (ts.isArrayLiteralExpression(node)) return { kind: "array", node };
    if (ts.isNewExpression(node)) return { kind: "new", constructor: calleeName(node.expression), node };
    if (ts.isBinaryExpression(node)) return this.binary(node, env);
    if (ts.isConditionalExpression(node)) {
      const whenTrue = this.evaluate(node.whenTrue, env);
      return hasLiteral(whenTrue) ? whenTrue : this.evaluate(node.whenFalse, env);
    }
    if (ts.isVoidExpression(node)) return unknown("undefined");
    if (ts.isIdentifier(node)) return this.identifier(node, env);
    if (ts.isPropertyAccessExpression(node))
      return this.member(node, node.expression, node.name.text, node.name, env);
    if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression))
      return this.member(node, node.expression, node.argumentExpression.text, node.argumentExpression, env);
    if (ts.isCallExpression(node)) return this.call(node, env);
    return unknown(nameOf(node));
  }

  private binary(node: ts.BinaryExpression, env: Env): Value {
    const operator = node.operatorToken.kind;
    if (operator === ts.SyntaxKind.PlusToken) {
      const left = this.evaluate(node.left, env);
      const right = this.evaluate(node.right, env);
      if (left.kind === "number" && right.kind === "number") return { kind: "number", text: "0" };
      return { kind: "text", parts: compact([...partsOf(left, node.left), ...partsOf(right, node.right)]) };
    }
    if (
      operator === ts.SyntaxKind.BarBarToken ||
      operator === ts.SyntaxKind.QuestionQuestionToken ||
      operator === ts.SyntaxKind.AmpersandAmpersandToken
    ) {
      // `base || "/api"`: the side that can be known; `a && b` is b when a holds.
      if (operator === ts.SyntaxKind.AmpersandAmpersandToken) return this.evaluate(node.right, env);
      const left = this.evaluate(node.left, env);
      return hasLiteral(left) || left.kind === "object" ? left : this.evaluate(node.right, env);
    }
    if (operator === ts.SyntaxKind.CommaToken) return this.evaluate(node.right, env);
    if (operator === ts.SyntaxKind.EqualsToken) return this.evaluate(node.right, env);
    return unknown(nameOf(node));
  }

  private identifier(node: ts.Identifier, env: Env): Value {
    if (node.text === "undefined") return unknown("undefined");
    for (const declaration of this.declarationsOf(node)) {
      const value = this.declarationValue(declaration, env);
      if (value) return value;
    }
    return unknown(node.text);
  }

  /** What a declaration holds, or undefined when it says nothing (a function, a class, an import of a package). */
  private declarationValue(declaration: ts.Declaration, env: Env): Value | undefined {
    if (ts.isParameter(declaration)) {
      if (env.has(declaration)) {
        const argument = env.get(declaration);
        if (argument) return this.evaluate(argument, env);
        // The caller passed nothing: the default, or undefined.
        return declaration.initializer ? this.evaluate(declaration.initializer, env) : unknown("undefined");
      }
      this.unbound.add(declaration);
      if (ts.isIdentifier(declaration.name)) return unknown(declaration.name.text);
      return undefined;
    }
    if (ts.isVariableDeclaration(declaration) && declaration.initializer && ts.isIdentifier(declaration.name))
      return this.evaluate(declaration.initializer, env);
    if (ts.isBindingElement(declaration)) return this.bindingElement(declaration, env);
    if (ts.isPropertyAssignment(declaration)) return this.evaluate(declaration.initializer, env);
    if (ts.isShorthandPropertyAssignment(declaration)) return this.identifier(declaration.name, env);
    if (ts.isPropertyDeclaration(declaration) && declaration.initializer)
      return this.evaluate(declaration.initializer, env);
    // `this.base = "/api"` in a JavaScript class: the assignment is the declaration.
    if (
      (ts.isPropertyAccessExpression(declaration) || ts.isElementAccessExpression(declaration)) &&
      ts.isBinaryExpression(declaration.parent) &&
      declaration.parent.left === declaration &&
      declaration.parent.operatorToken.kind === ts.SyntaxKind.EqualsToken
    )
      return this.evaluate(declaration.parent.right, env);
    if (ts.isExportAssignment(declaration)) return this.evaluate(declaration.expression, env);
    return undefined;
  }

  /** `const { apiUrl } = environment` and `function f({ url, method })`: the property of what is destructured. */
  private bindingElement(element: ts.BindingElement, env: Env): Value | undefined {
    const pattern = element.parent;
    if (!ts.isObjectBindingPattern(pattern)) return undefined;
    const key = element.propertyName
      ? propertyNameText(element.propertyName)
      : ts.isIdentifier(element.name)
        ? element.name.text
        : undefined;
    if (key === undefined) return undefined;
    const owner = pattern.parent;
    let source: Value | undefined;
    if (ts.isVariableDeclaration(owner) && owner.initializer) source = this.evaluate(owner.initializer, env);
    else if (ts.isParameter(owner)) {
      if (!env.has(owner)) {
        this.unbound.add(owner);
        return unknown(key);
      }
      const argument = env.get(owner);
      source = argument ? this.evaluate(argument, env) : undefined;
    }
    const value = source?.kind === "object" ? this.property(source.node, key, env) : undefined;
    if (value) return value;
    return element.initializer ? this.evaluate(element.initializer, env) : unknown(key);
  }

  private member(
    node: ts.Expression,
    object: ts.Expression,
    name: string,
    nameNode: ts.Node,
    env: Env,
  ): Value {
    if (object.kind !== ts.SyntaxKind.ThisKeyword) {
      const target = this.evaluate(object, env);
      if (target.kind === "object") {
        const value = this.property(target.node, name, env);
        if (value) return value;
      }
    }
    for (const declaration of this.declarationsOf(nameNode)) {
      const value = this.declarationValue(declaration, env);
      if (value && value.kind !== "unknown") return value;
    }
    if (object.kind === ts.SyntaxKind.ThisKeyword) {
      const assigned = thisFieldInitializer(node, name);
      if (assigned) return this.evaluate(assigned, EMPTY_ENV);
    }
    return unknown(name);
  }

  private call(node: ts.CallExpression, env: Env): Value {
    const callee = node.expression;
    const name = calleeName(callee);
    const first = node.arguments[0];
    if (PASS_THROUGH.has(name) && first && ts.isIdentifier(callee)) {
      const value = this.evaluate(first, env);
      return value.kind === "text" ? value : { kind: "text", parts: [{ hole: nameOf(first) }] };
    }
    if (ts.isPropertyAccessExpression(callee)) {
      const receiver = callee.expression;
      if (SAME_TEXT_METHODS.has(name)) {
        const value = this.evaluate(receiver, env);
        if (value.kind === "text") return value;
      }
      if (name === "concat") {
        const value = this.evaluate(receiver, env);
        if (value.kind === "text") {
          const parts = [...value.parts];
          for (const argument of node.arguments) parts.push(...this.text(argument, env));
          return { kind: "text", parts: compact(parts) };
        }
      }
      if (name === "join" && ts.isArrayLiteralExpression(skipOuter(receiver))) {
        const separator = first && ts.isStringLiteralLike(first) ? first.text : ",";
        const parts: Part[] = [];
        (skipOuter(receiver) as ts.ArrayLiteralExpression).elements.forEach((element, index) => {
          if (index > 0) parts.push({ literal: separator });
          parts.push(...this.text(element, env));
        });
        return { kind: "text", parts: compact(parts) };
      }
    }
    return { kind: "call", name, node };
  }
}

/** The value as text parts, or one hole named after the expression it came from. */
export function partsOf(value: Value, from: ts.Node): Part[] {
  if (value.kind === "text") return value.parts;
  if (value.kind === "number") return [{ literal: value.text }];
  return [{ hole: value.kind === "unknown" ? value.name : nameOf(from) }];
}

/** A literal string when the value is one with no holes. */
export function literalOf(value: Value | undefined): string | undefined {
  if (!value) return undefined;
  if (value.kind === "number") return value.text;
  if (value.kind !== "text" || value.parts.some((part) => "hole" in part)) return undefined;
  return value.parts.map((part) => ("literal" in part ? part.literal : "")).join("");
}

export function calleeName(callee: ts.Expression): string {
  const inner = skipOuter(callee);
  if (ts.isIdentifier(inner)) return inner.text;
  if (ts.isPropertyAccessExpression(inner)) return inner.name.text;
  if (ts.isElementAccessExpression(inner) && ts.isStringLiteralLike(inner.argumentExpression))
    return inner.argumentExpression.text;
  return "";
}

/** Parentheses, `as`, `!`, `<T>x` and `satisfies` change nothing about the value. */
export function skipOuter(expression: ts.Expression): ts.Expression {
  let current = expression;
  while (
    ts.isParenthesizedExpression(current) ||
    ts.isAsExpression(current) ||
    ts.isNonNullExpression(current) ||
    ts.isTypeAssertionExpression(current) ||
    ts.isSatisfiesExpression(current)
  )
    current = current.expression;
  return current;
}

export function propertyName(property: ts.ObjectLiteralElementLike): string | undefined {
  return property.name ? propertyNameText(property.name) : undefined;
}

function propertyNameText(name: ts.PropertyName | ts.BindingName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteralLike(name) || ts.isNumericLiteral(name)) return name.text;
  if (ts.isPrivateIdentifier(name)) return name.text;
  return undefined;
}

/** A name for what an expression stands for, to name the hole it leaves in a path. */
export function nameOf(node: ts.Node): string {
  if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) return node.name.text;
  if (ts.isCallExpression(node)) {
    const first = node.arguments[0];
    return first ? nameOf(first) : calleeName(node.expression) || "value";
  }
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isNonNullExpression(node))
    return nameOf(node.expression);
  return "value";
}

/** `this.<name> = <expression>` in the enclosing class's constructor, or its field initialiser. */
function thisFieldInitializer(from: ts.Node, name: string): ts.Expression | undefined {
  let node: ts.Node | undefined = from;
  while (node && !ts.isClassLike(node)) node = node.parent;
  if (!node) return undefined;
  for (const member of node.members) {
    if (ts.isPropertyDeclaration(member) && member.initializer && propertyNameText(member.name) === name)
      return member.initializer;
  }
  const construct = node.members.find(ts.isConstructorDeclaration);
  let found: ts.Expression | undefined;
  const visit = (child: ts.Node): void => {
    if (found) return;
    if (
      ts.isBinaryExpression(child) &&
      child.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(child.left) &&
      child.left.expression.kind === ts.SyntaxKind.ThisKeyword &&
      child.left.name.text === name
    ) {
      found = child.right;
      return;
    }
    ts.forEachChild(child, visit);
  };
  if (construct?.body) visit(construct.body);
  return found;
}

function unknown(name: string): Value {
  return { kind: "unknown", name };
}

function hasLiteral(value: Value): boolean {
  return (
    (value.kind === "text" && value.parts.some((part) => "literal" in part && part.literal !== "")) ||
    value.kind === "number"
  );
}

function compact(parts: Part[]): Part[] {
  const result: Part[] = [];
  for (const part of parts) {
    const last = result.at(-1);
    if ("literal" in part) {
      if (part.literal === "") continue;
      if (last && "literal" in last) {
        result[result.length - 1] = { literal: last.literal + part.literal };
        continue;
      }
    }
    result.push(part);
  }
  return result;
}
