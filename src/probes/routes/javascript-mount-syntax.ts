import ts from "typescript";
import { type FileBindings, isRelative } from "./javascript-bindings.ts";
import type { ChildReference } from "./javascript-file-facts.ts";
import type { JavaScriptFileModel } from "./javascript-file-model.ts";
import { functionKey } from "./javascript-receivers.ts";
import {
  isFunctionNode,
  propertyName,
  propertyOf,
  requireSpecifier,
  staticString,
  unwrap,
} from "./javascript-syntax.ts";

// What the arguments of a registration are, syntactically: the router or plugin a mount names (here or in
// another file), a handler-like last argument, a websocket flag, a loop over a literal table of routes.

/** What a mounted expression denotes: a local router, an imported one, a plugin function. */
export function childReference(
  expression: ts.Expression,
  bindings: FileBindings,
): ChildReference | undefined {
  const value = unwrap(expression);
  const required = requireSpecifier(value);
  if (required !== undefined)
    return isRelative(required) ? { specifier: required, exportName: "default" } : undefined;
  if (ts.isIdentifier(value)) {
    const imported = bindings.imports.get(value.text);
    if (imported) return imported.exportName === "*" ? { ...imported, exportName: "default" } : imported;
    return { local: value.text };
  }
  if (isFunctionNode(value)) return { local: functionKey(value) };
  if (ts.isPropertyAccessExpression(value)) {
    // `router.routes()` (Koa) is the router; `routes.users` is an export of an imported module;
    // `(await import("./x")).default` and `require("./x").router` name an export directly.
    const base = unwrap(value.expression);
    const loaded = requireSpecifier(base);
    if (loaded !== undefined)
      return isRelative(loaded) ? { specifier: loaded, exportName: value.name.text } : undefined;
    if (ts.isIdentifier(base)) {
      const imported = bindings.imports.get(base.text);
      if (imported && (imported.exportName === "*" || imported.exportName === "default")) {
        return { specifier: imported.specifier, exportName: value.name.text };
      }
    }
    return undefined;
  }
  if (ts.isCallExpression(value)) {
    const callee = unwrap(value.expression);
    if (ts.isPropertyAccessExpression(callee) && /^(routes|middleware|callback)$/.test(callee.name.text)) {
      return childReference(callee.expression, bindings);
    }
    // Plugin wrappers: `fp(plugin)`, `fp(async (fastify) => …)`.
    const first = value.arguments[0];
    if (first && value.arguments.length <= 2) return childReference(first, bindings);
  }
  return undefined;
}

const MAX_EXPANSIONS = 50;

/**
 * The strings a path argument can be: a literal, an array of them, or a template over the variable of a loop
 * on literal names (`for (const name of ["users", "posts"])`, `["users", "posts"].forEach((name) => …)`).
 */
export function pathValues(expression: ts.Expression, at: ts.Node, model: JavaScriptFileModel): string[] {
  const constants = model.bindings.constants;
  const value = unwrap(expression);
  if (ts.isArrayLiteralExpression(value))
    return value.elements.flatMap((element) => pathValues(element, at, model));
  const direct = staticString(value, constants);
  if (direct !== undefined) return [direct];
  const expansions = loopExpansions(at, model);
  if (expansions.length <= 1) return [];
  return expansions
    .map((bound) => staticString(value, stringsOf(bound, constants)))
    .filter((path) => path !== undefined);
}

/**
 * One binding per iteration of the loops around `at` over literal arrays: strings (`["users", "posts"]`) or
 * objects (`[{ method: "get", path: "/a", handler: a }]`, read as `route.path` or destructured `{ path }`).
 */
export function loopExpansions(at: ts.Node, model: JavaScriptFileModel): Map<string, ts.Expression>[] {
  let expansions: Map<string, ts.Expression>[] = [new Map()];
  const elementsOf = (expression: ts.Expression): readonly ts.Expression[] | undefined => {
    let value = unwrap(expression);
    if (ts.isIdentifier(value)) {
      const declared = model.declarations.get(value.text);
      if (!declared) return undefined;
      value = unwrap(declared);
    }
    return ts.isArrayLiteralExpression(value) ? value.elements : undefined;
  };
  const expand = (name: ts.BindingName, elements: readonly ts.Expression[]): void => {
    const next: Map<string, ts.Expression>[] = [];
    for (const bound of expansions)
      for (const element of elements) next.push(bindElement(new Map(bound), name, unwrap(element)));
    expansions = next.length > MAX_EXPANSIONS ? [] : next;
  };
  for (
    let current: ts.Node | undefined = at.parent;
    current && expansions.length > 0;
    current = current.parent
  ) {
    if (ts.isForOfStatement(current) && ts.isVariableDeclarationList(current.initializer)) {
      const declaration = current.initializer.declarations[0];
      const elements = elementsOf(current.expression);
      if (declaration && elements) expand(declaration.name, elements);
    }
    if (
      (ts.isArrowFunction(current) || ts.isFunctionExpression(current)) &&
      ts.isCallExpression(current.parent)
    ) {
      const callee = unwrap(current.parent.expression);
      const parameter = current.parameters[0]?.name;
      if (ts.isPropertyAccessExpression(callee) && /^(forEach|map)$/.test(callee.name.text) && parameter) {
        const elements = elementsOf(callee.expression);
        if (elements) expand(parameter, elements);
      }
    }
  }
  return expansions;
}

function bindElement(
  bound: Map<string, ts.Expression>,
  name: ts.BindingName,
  element: ts.Expression,
): Map<string, ts.Expression> {
  if (ts.isIdentifier(name)) {
    bound.set(name.text, element);
    if (ts.isObjectLiteralExpression(element)) {
      for (const property of element.properties) {
        const key = property.name ? propertyName(property.name) : undefined;
        const value = ts.isPropertyAssignment(property)
          ? property.initializer
          : ts.isShorthandPropertyAssignment(property)
            ? property.name
            : undefined;
        if (key !== undefined && value) bound.set(`${name.text}.${key}`, value);
      }
    }
  } else if (ts.isObjectBindingPattern(name) && ts.isObjectLiteralExpression(element)) {
    for (const binding of name.elements) {
      const key = binding.propertyName
        ? propertyName(binding.propertyName)
        : ts.isIdentifier(binding.name)
          ? binding.name.text
          : undefined;
      const value = key === undefined ? undefined : propertyOf(element, key);
      if (value && ts.isIdentifier(binding.name)) bound.set(binding.name.text, value);
    }
  }
  return bound;
}

/** The string-valued bindings of one iteration, over the file's constants. */
export function stringsOf(
  bound: Map<string, ts.Expression>,
  constants: ReadonlyMap<string, string>,
): Map<string, string> {
  const strings = new Map(constants);
  for (const [name, expression] of bound) {
    const value = staticString(expression, constants);
    if (value !== undefined) strings.set(name, value);
  }
  return strings;
}

export function isWebSocketRoute(args: readonly ts.Expression[]): boolean {
  return args.some((argument) => {
    const value = unwrap(argument);
    if (ts.isObjectLiteralExpression(value)) {
      const flag = propertyOf(value, "websocket");
      return flag !== undefined && flag.kind === ts.SyntaxKind.TrueKeyword;
    }
    return ts.isCallExpression(value) && /upgradeWebSocket$/.test(value.expression.getText());
  });
}

export function isHandlerLike(expression: ts.Expression | undefined, bindings: FileBindings): boolean {
  if (!expression) return false;
  const value = unwrap(expression);
  if (isFunctionNode(value) || ts.isCallExpression(value) || ts.isArrayLiteralExpression(value)) return true;
  if (ts.isPropertyAccessExpression(value)) return true;
  if (ts.isIdentifier(value)) return !bindings.plainValues.has(value.text);
  if (ts.isObjectLiteralExpression(value)) return propertyOf(value, "handler") !== undefined;
  return false;
}

export function frameworkByName(receiver: string): string | undefined {
  return /(^|\.)fastify$/i.test(receiver) ? "fastify" : undefined;
}

/** Module-level object and array literals by name, for dispatch tables referenced from a request handler. */
export function collectObjects(
  source: ts.SourceFile,
): Map<string, ts.ObjectLiteralExpression | ts.ArrayLiteralExpression> {
  const objects = new Map<string, ts.ObjectLiteralExpression | ts.ArrayLiteralExpression>();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      const value = declaration.initializer && unwrap(declaration.initializer);
      if (
        ts.isIdentifier(declaration.name) &&
        value &&
        (ts.isObjectLiteralExpression(value) || ts.isArrayLiteralExpression(value))
      ) {
        objects.set(declaration.name.text, value);
      }
    }
  }
  return objects;
}
