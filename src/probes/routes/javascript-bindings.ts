import ts from "typescript";
import {
  collectStringConstants,
  isFunctionNode,
  propertyOf,
  requireSpecifier,
  staticString,
  unwrap,
} from "./javascript-syntax.ts";
import { joinPaths, normalizePathTemplate } from "./path-template.ts";

// First pass over one file: what its names are bound to (imports, framework factories, HTTP clients,
// exports), before any call is read as a route.

/** Packages whose objects serve HTTP; what a route found through them is attributed to. */
export const SERVER_PACKAGES: Record<string, string> = {
  express: "express",
  "express-ws": "express",
  fastify: "fastify",
  "fastify-plugin": "fastify",
  "@fastify/websocket": "fastify",
  hono: "hono",
  "@hono/zod-openapi": "hono",
  "@hono/node-server": "hono",
  koa: "koa",
  "@koa/router": "koa",
  "koa-router": "koa",
  "koa-mount": "koa",
  restify: "restify",
  polka: "polka",
};

/** Packages whose `.get('/x', …)` is a request going out, never a route. */
const CLIENT_PACKAGES = new Set([
  "axios",
  "ky",
  "got",
  "node-fetch",
  "cross-fetch",
  "isomorphic-fetch",
  "superagent",
  "supertest",
  "undici",
  "request",
  "needle",
  "ofetch",
  "wretch",
]);

export interface ImportBinding {
  /** A relative module specifier as written. */
  specifier: string;
  /** `default`, a named export, or `*` for a namespace/CommonJS module object. */
  exportName: string;
}

export interface ContainerDeclaration {
  framework?: string;
  prefix: string;
}

export interface FileBindings {
  constants: Map<string, string>;
  imports: Map<string, ImportBinding>;
  /** Local name → package it came from (`express`, `ws`, `axios`…). */
  packages: Map<string, string>;
  /** Server frameworks this file imports, in order of appearance. */
  serverFrameworks: string[];
  clients: Set<string>;
  containers: Map<string, ContainerDeclaration>;
  /** `const api = app.basePath("/api")`: api is mounted on app. */
  derivedMounts: Array<{ parent: string; child: string; prefix: string }>;
  /** Export name → local name (a container or a function key). */
  exports: Map<string, string>;
  functions: Map<string, ts.FunctionLikeDeclaration>;
  /** Local variables bound to something that is not a function (an options object, a string…). */
  plainValues: Set<string>;
}

export function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

export function isRelative(specifier: string): boolean {
  return specifier.startsWith("./") || specifier.startsWith("../");
}

export function collectBindings(source: ts.SourceFile): FileBindings {
  const bindings: FileBindings = {
    constants: collectStringConstants(source),
    imports: new Map(),
    packages: new Map(),
    serverFrameworks: [],
    clients: new Set(),
    containers: new Map(),
    derivedMounts: [],
    exports: new Map(),
    functions: new Map(),
    plainValues: new Set(),
  };
  const bindModule = (local: string, specifier: string, exportName: string): void => {
    if (isRelative(specifier)) {
      bindings.imports.set(local, { specifier, exportName });
      return;
    }
    const name = packageName(specifier);
    bindings.packages.set(local, name);
    if (CLIENT_PACKAGES.has(name)) bindings.clients.add(local);
  };
  const noteFramework = (specifier: string): void => {
    const framework = SERVER_PACKAGES[packageName(specifier)];
    if (framework && !bindings.serverFrameworks.includes(framework))
      bindings.serverFrameworks.push(framework);
  };

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text;
      noteFramework(specifier);
      const clause = node.importClause;
      if (clause?.name) bindModule(clause.name.text, specifier, "default");
      const named = clause?.namedBindings;
      if (named && ts.isNamespaceImport(named)) bindModule(named.name.text, specifier, "*");
      if (named && ts.isNamedImports(named)) {
        for (const element of named.elements) {
          bindModule(element.name.text, specifier, (element.propertyName ?? element.name).text);
        }
      }
    } else if (ts.isVariableDeclaration(node) && node.initializer) {
      collectVariable(node, bindings, bindModule, noteFramework);
    } else if (ts.isFunctionDeclaration(node) && node.name) {
      bindings.functions.set(node.name.text, node);
    }
    collectExport(node, bindings);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return bindings;
}

function collectVariable(
  node: ts.VariableDeclaration,
  bindings: FileBindings,
  bindModule: (local: string, specifier: string, exportName: string) => void,
  noteFramework: (specifier: string) => void,
): void {
  const initializer = unwrap(node.initializer as ts.Expression);
  // `const { a, b: c } = require("./x")`
  if (ts.isObjectBindingPattern(node.name)) {
    const specifier = requireSpecifier(initializer);
    if (specifier === undefined) return;
    noteFramework(specifier);
    for (const element of node.name.elements) {
      if (!ts.isIdentifier(element.name)) continue;
      const exported =
        element.propertyName && ts.isIdentifier(element.propertyName)
          ? element.propertyName.text
          : element.name.text;
      bindModule(element.name.text, specifier, exported);
    }
    return;
  }
  if (!ts.isIdentifier(node.name)) return;
  const name = node.name.text;
  if (isFunctionNode(initializer)) {
    bindings.functions.set(name, initializer);
    return;
  }
  const required = requireSpecifier(initializer);
  if (required !== undefined) {
    noteFramework(required);
    bindModule(name, required, isRelative(required) ? "*" : "default");
    return;
  }
  // `require("./x").router`
  if (ts.isPropertyAccessExpression(initializer)) {
    const specifier = requireSpecifier(initializer.expression);
    if (specifier !== undefined && isRelative(specifier)) {
      bindings.imports.set(name, { specifier, exportName: initializer.name.text });
      return;
    }
  }
  const declared = declareFactoryResult(name, initializer, bindings);
  if (!declared && !ts.isCallExpression(initializer) && !ts.isNewExpression(initializer)) {
    bindings.plainValues.add(name);
  }
}

/** Records what `name = expression` creates: a server container, a derived one, or an HTTP client. */
function declareFactoryResult(name: string, expression: ts.Expression, bindings: FileBindings): boolean {
  const factory = describeFactory(expression, bindings);
  if (factory.clientRoot) {
    bindings.clients.add(name);
    return true;
  }
  if (factory.framework) {
    const ownPrefix = factory.options
      ? staticString(propertyOf(factory.options, "prefix"), bindings.constants)
      : undefined;
    const prefix = [ownPrefix ?? "", ...factory.basePaths].reduce(
      (left, right) => (right ? joinPaths(left, right) : left),
      "",
    );
    bindings.containers.set(name, { framework: factory.framework, prefix: prefix === "/" ? "" : prefix });
    return true;
  }
  if (factory.containerRoot !== undefined && factory.basePaths.length > 0) {
    const prefix = factory.basePaths.reduce((left, right) => joinPaths(left, right), "");
    bindings.containers.set(name, {
      framework: bindings.containers.get(factory.containerRoot)?.framework,
      prefix: "",
    });
    bindings.derivedMounts.push({ parent: factory.containerRoot, child: name, prefix });
    return true;
  }
  return false;
}

interface Factory {
  framework?: string;
  clientRoot?: boolean;
  containerRoot?: string;
  basePaths: string[];
  options?: ts.ObjectLiteralExpression;
}

/** What `express()`, `express.Router()`, `new Router({ prefix })`, `new Hono().basePath("/x")` create. */
function describeFactory(expression: ts.Expression, bindings: FileBindings): Factory {
  const basePaths: string[] = [];
  let options: ts.ObjectLiteralExpression | undefined;
  let node = unwrap(expression);
  let sawCall = false;
  for (let step = 0; step < 12; step += 1) {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const required = requireSpecifier(node);
      if (required !== undefined) {
        const framework = SERVER_PACKAGES[packageName(required)];
        return { framework: sawCall ? framework : undefined, basePaths, options };
      }
      sawCall = true;
      const callee = unwrap(node.expression);
      const firstObject = node.arguments?.find((argument) => ts.isObjectLiteralExpression(unwrap(argument)));
      if (ts.isPropertyAccessExpression(callee) && callee.name.text === "basePath") {
        const base = staticString(node.arguments?.[0], bindings.constants);
        if (base !== undefined) basePaths.unshift(normalizePathTemplate(base, "colon"));
        node = unwrap(callee.expression);
        continue;
      }
      options ??= firstObject ? (unwrap(firstObject) as ts.ObjectLiteralExpression) : undefined;
      node = callee;
      continue;
    }
    if (ts.isPropertyAccessExpression(node)) {
      node = unwrap(node.expression);
      continue;
    }
    break;
  }
  if (!sawCall || !ts.isIdentifier(node)) return { basePaths };
  const root = node.text;
  if (bindings.clients.has(root)) return { clientRoot: true, basePaths };
  const fromPackage = bindings.packages.get(root);
  const framework = fromPackage ? SERVER_PACKAGES[fromPackage] : undefined;
  if (framework) return { framework, basePaths, options };
  if (bindings.containers.has(root)) return { containerRoot: root, basePaths };
  return { basePaths };
}

function collectExport(node: ts.Node, bindings: FileBindings): void {
  if (ts.isExportAssignment(node)) {
    exportDefault(node.expression, bindings);
    return;
  }
  const modifiers = ts.canHaveModifiers(node) ? ts.getModifiers(node) : undefined;
  const isExported = modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword) ?? false;
  const isDefault = modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.DefaultKeyword) ?? false;
  if (ts.isFunctionDeclaration(node) && isExported) {
    const local = node.name?.text ?? "default";
    bindings.exports.set(isDefault ? "default" : local, local);
  } else if (ts.isVariableStatement(node) && isExported) {
    for (const declaration of node.declarationList.declarations) {
      if (ts.isIdentifier(declaration.name))
        bindings.exports.set(declaration.name.text, declaration.name.text);
    }
  } else if (ts.isExportDeclaration(node) && !node.moduleSpecifier && node.exportClause) {
    if (ts.isNamedExports(node.exportClause)) {
      for (const element of node.exportClause.elements) {
        bindings.exports.set(element.name.text, (element.propertyName ?? element.name).text);
      }
    }
  } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    const target = node.left.getText();
    if (target === "module.exports") {
      const value = unwrap(node.right);
      if (ts.isObjectLiteralExpression(value)) {
        for (const property of value.properties) {
          if (ts.isShorthandPropertyAssignment(property))
            bindings.exports.set(property.name.text, property.name.text);
          if (ts.isPropertyAssignment(property) && ts.isIdentifier(property.name)) {
            bindings.exports.set(property.name.text, exportedLocal(property.initializer, property.name.text));
          }
        }
      } else {
        exportDefault(value, bindings);
      }
    }
    const named = /^(?:module\.)?exports\.([A-Za-z_$][\w$]*)$/.exec(target);
    if (named?.[1]) bindings.exports.set(named[1], exportedLocal(node.right, named[1]));
  }
}

/** `export default express.Router()`: an anonymous container exported as `default`. */
function exportDefault(expression: ts.Expression, bindings: FileBindings): void {
  const local = exportedLocal(expression, "default");
  bindings.exports.set("default", local);
  const value = unwrap(expression);
  if (local === "default" && (ts.isCallExpression(value) || ts.isNewExpression(value))) {
    declareFactoryResult("default", value, bindings);
  }
}

/**
 * The local name an exported value is known by: an identifier is itself, `fp(routes)` is `routes`,
 * and an inline function takes the export's name (matching `functionKey`).
 */
function exportedLocal(expression: ts.Expression, fallback: string): string {
  const value = unwrap(expression);
  if (ts.isIdentifier(value)) return value.text;
  if (ts.isCallExpression(value)) {
    const first = value.arguments[0];
    if (first && ts.isIdentifier(unwrap(first))) return (unwrap(first) as ts.Identifier).text;
  }
  if ((ts.isFunctionExpression(value) || ts.isClassExpression(value)) && value.name) return value.name.text;
  return fallback;
}
