import ts from "typescript";
import { lineOf, propertyOf, staticString, unwrap } from "./javascript-syntax.ts";
import { normalizePathTemplate } from "./path-template.ts";

// Decorator-declared routes (NestJS and look-alikes): `@Controller("users")` on a class, `@Get(":id")`
// on its methods, and `app.setGlobalPrefix("api")` in the bootstrap file.

const METHOD_DECORATORS: Record<string, string> = {
  Get: "GET",
  Post: "POST",
  Put: "PUT",
  Patch: "PATCH",
  Delete: "DELETE",
  Options: "OPTIONS",
  Head: "HEAD",
  All: "ALL",
};

export interface DecoratedController {
  /** Container name within the file. */
  name: string;
  prefix: string;
  routes: Array<{
    method: string;
    path: string;
    line: number;
    declaration: ts.MethodDeclaration;
    /** `@Version("2")` on the method, else the controller's `version`. */
    versions?: string[];
  }>;
}

export function decoratedControllers(
  source: ts.SourceFile,
  constants: ReadonlyMap<string, string>,
): DecoratedController[] {
  const controllers: DecoratedController[] = [];
  // Most files declare no controller: a walk of their whole tree is not worth it.
  if (!source.text.includes("Controller")) return controllers;
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node)) {
      const controller = decoratorCall(node, "Controller");
      if (controller) {
        const routes: DecoratedController["routes"] = [];
        const controllerVersions = optionVersions(controller.arguments[0], constants);
        for (const member of node.members) {
          if (!ts.isMethodDeclaration(member)) continue;
          for (const [decorator, method] of Object.entries(METHOD_DECORATORS)) {
            const call = decoratorCall(member, decorator);
            if (!call) continue;
            const versionCall = decoratorCall(member, "Version");
            const versions = versionCall
              ? versionList(versionCall.arguments[0], constants)
              : controllerVersions;
            for (const path of decoratorPaths(call, constants)) {
              routes.push({
                method,
                path: normalizePathTemplate(path, "colon"),
                line: lineOf(source, member),
                declaration: member,
                ...(versions.length > 0 ? { versions } : {}),
              });
            }
          }
        }
        const prefix = decoratorPaths(controller, constants)[0] ?? "";
        controllers.push({
          name: `controller:${node.name?.text ?? lineOf(source, node)}`,
          prefix: prefix === "" || prefix === "/" ? "" : normalizePathTemplate(prefix, "colon"),
          routes,
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return controllers;
}

/** `app.setGlobalPrefix("api")` anywhere in the file. */
export function globalPrefixes(source: ts.SourceFile, constants: ReadonlyMap<string, string>): string[] {
  const prefixes: string[] = [];
  if (!source.text.includes("setGlobalPrefix")) return prefixes;
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === "setGlobalPrefix"
    ) {
      const prefix = staticString(node.arguments[0], constants);
      if (prefix !== undefined) prefixes.push(normalizePathTemplate(prefix, "colon"));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return prefixes;
}

export interface Versioning {
  /** What precedes the version in the path (`v` by default). */
  prefix: string;
  defaultVersions: string[];
}

/** `app.enableVersioning({ type: VersioningType.URI })`: versions become a path segment (`/v1/...`). */
export function uriVersioning(
  source: ts.SourceFile,
  constants: ReadonlyMap<string, string>,
): Versioning | undefined {
  let found: Versioning | undefined;
  if (!source.text.includes("enableVersioning")) return undefined;
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === "enableVersioning"
    ) {
      const options = node.arguments[0] && unwrap(node.arguments[0]);
      const type = options && ts.isObjectLiteralExpression(options) ? propertyOf(options, "type") : undefined;
      if (!type || /URI/.test(type.getText(source))) {
        const prefixValue =
          options && ts.isObjectLiteralExpression(options) ? propertyOf(options, "prefix") : undefined;
        const prefix =
          prefixValue?.kind === ts.SyntaxKind.FalseKeyword
            ? ""
            : (staticString(prefixValue, constants) ?? "v");
        const defaults =
          options && ts.isObjectLiteralExpression(options)
            ? propertyOf(options, "defaultVersion")
            : undefined;
        found = { prefix, defaultVersions: versionList(defaults, constants) };
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function optionVersions(
  argument: ts.Expression | undefined,
  constants: ReadonlyMap<string, string>,
): string[] {
  const value = argument && unwrap(argument);
  return value && ts.isObjectLiteralExpression(value)
    ? versionList(propertyOf(value, "version"), constants)
    : [];
}

function versionList(argument: ts.Expression | undefined, constants: ReadonlyMap<string, string>): string[] {
  const value = argument && unwrap(argument);
  if (!value) return [];
  const elements = ts.isArrayLiteralExpression(value) ? [...value.elements] : [value];
  return elements.map((element) => staticString(element, constants)).filter((entry) => entry !== undefined);
}

function decoratorCall(node: ts.HasDecorators, name: string): ts.CallExpression | undefined {
  for (const decorator of ts.getDecorators(node) ?? []) {
    const expression = decorator.expression;
    if (
      ts.isCallExpression(expression) &&
      ts.isIdentifier(expression.expression) &&
      expression.expression.text === name
    ) {
      return expression;
    }
  }
  return undefined;
}

/** `@Get()`, `@Get(":id")`, `@Get([":a", ":b"])`, `@Controller({ path: "users" })`. */
function decoratorPaths(call: ts.CallExpression, constants: ReadonlyMap<string, string>): string[] {
  return pathsOf(call.arguments[0], constants);
}

function pathsOf(argument: ts.Expression | undefined, constants: ReadonlyMap<string, string>): string[] {
  const value = argument && unwrap(argument);
  if (!value) return [""];
  if (ts.isObjectLiteralExpression(value)) return pathsOf(propertyOf(value, "path"), constants);
  if (ts.isArrayLiteralExpression(value)) {
    return value.elements
      .map((element) => staticString(element, constants))
      .filter((path) => path !== undefined);
  }
  const path = staticString(value, constants);
  return path === undefined ? [] : [path];
}
