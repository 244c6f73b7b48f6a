import ts from "typescript";
import { collectBindings } from "./javascript-bindings.ts";
import {
  decoratedControllers,
  globalPrefixes,
  uriVersioning,
  type Versioning,
} from "./javascript-decorators.ts";
import { dispatchedPaths, handlerFunction } from "./javascript-dispatch.ts";
import { buildFileModel, type JavaScriptFileModel } from "./javascript-file-model.ts";
import {
  childReference,
  collectObjects,
  frameworkByName,
  isHandlerLike,
  isWebSocketRoute,
  loopExpansions,
  pathValues,
  stringsOf,
} from "./javascript-mount-syntax.ts";
import { nestMethodInputs } from "./javascript-nest-inputs.ts";
import { functionKey, joinAll, type ReceiverChain, receiverChain } from "./javascript-receivers.ts";
import type { ReadSink } from "./javascript-request-reads.ts";
import { branchInputs, type InputsDraft, routeArgumentInputs } from "./javascript-route-inputs.ts";
import {
  HTTP_METHODS,
  isFunctionNode,
  lineOf,
  methodList,
  propertyOf,
  receiverName,
  requireSpecifier,
  rootIdentifier,
  staticString,
  unwrap,
} from "./javascript-syntax.ts";
import { joinPaths, normalizePathTemplate } from "./path-template.ts";
import { type BodyEncoding, RouteInputsBuilder } from "./route-inputs.ts";

// Second pass over one file: route registrations, mounts and WebSocket endpoints, read from call
// expressions of the syntax tree (never from text, so comments and strings cannot fake a route).

export type ChildReference = { local: string } | { specifier: string; exportName: string };

export interface JavaScriptFileFacts {
  containers: Map<string, { framework?: string; prefix: string }>;
  routes: Array<{
    container: string;
    method: string;
    path: string;
    line: number;
    framework?: string;
    /** Kept only if the container turns out to be a server object declared in another file. */
    onlyIfContainer?: boolean;
    /** What the handler and its middleware read, with names from other files still to look up. */
    inputs?: InputsDraft;
    /** API versions of a decorated route, a path segment when the app versions by URI. */
    versions?: string[];
  }>;
  mounts: Array<{ parent: string; child: ChildReference; prefix: string }>;
  exports: Map<string, string>;
  /** Local names bound to another file's export: a router imported here is that file's router. */
  imports: Map<string, ChildReference>;
  channels: Array<{ path: string; line: number; framework: string }>;
  /** Decorated controllers (`@Controller`), whose prefix a global prefix may extend. */
  controllers: string[];
  /** `app.setGlobalPrefix(…)` calls: a prefix for every decorated controller of the tree. */
  globalPrefixes: string[];
  /** `app.enableVersioning({ type: VersioningType.URI })` in this file. */
  versioning?: Versioning;
  /** Body parsers the file installs (`express.json()`, `bodyParser.urlencoded()`): how bodies arrive. */
  bodyParsers: BodyEncoding[];
  /** The parsed file, for handlers and schemas other files name. */
  model: JavaScriptFileModel;
}

/** Receiver names that are a server object by convention when nothing else says so. */
const SERVER_NAME =
  /^(app|application|api|router|routes?|server|fastify|instance|hono|web)$|(router|app|server|api)$/i;

export function extractJavaScriptFacts(fileName: string, text: string): JavaScriptFileFacts {
  const kind = fileName.endsWith("x")
    ? ts.ScriptKind.TSX
    : fileName.endsWith(".ts")
      ? ts.ScriptKind.TS
      : ts.ScriptKind.JS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  const bindings = collectBindings(source);
  const model = buildFileModel(fileName, source, bindings);
  const facts: JavaScriptFileFacts = {
    containers: new Map(bindings.containers),
    routes: [],
    mounts: bindings.derivedMounts.map((mount) => ({ ...mount, child: { local: mount.child } })),
    exports: bindings.exports,
    imports: new Map(
      [...bindings.imports].map(([local, binding]) => [
        local,
        {
          specifier: binding.specifier,
          exportName: binding.exportName === "*" ? "default" : binding.exportName,
        },
      ]),
    ),
    channels: [],
    controllers: [],
    globalPrefixes: globalPrefixes(source, bindings.constants),
    bodyParsers: [],
    model,
    versioning: uriVersioning(source, bindings.constants),
  };
  for (const controller of decoratedControllers(source, bindings.constants)) {
    facts.controllers.push(controller.name);
    // The controller's own path goes on each route: a URI version sits between it and the global prefix.
    facts.containers.set(controller.name, { framework: "nestjs", prefix: "" });
    for (const { declaration, path, ...route } of controller.routes) {
      const sink: ReadSink = { builder: new RouteInputsBuilder(), deferred: [] };
      nestMethodInputs(model, declaration, sink);
      const inputs = { inputs: sink.builder.build(), deferred: sink.deferred };
      facts.routes.push({
        container: controller.name,
        ...route,
        path: joinPaths(controller.prefix || "/", path),
        framework: "nestjs",
        inputs,
      });
    }
  }
  const objects = collectObjects(source);
  const pendingReceivers = new Set<string>();
  const fileFramework = bindings.serverFrameworks[0];
  const string = (expression: ts.Expression | undefined): string | undefined =>
    staticString(expression, bindings.constants);

  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) inspectCall(node);
    if (ts.isNewExpression(node)) inspectNew(node);
    ts.forEachChild(node, visit);
  };

  const inspectNew = (node: ts.NewExpression): void => {
    // `new WebSocketServer({ path: "/ws" })`, `new Server(http, { path })` from ws or socket.io.
    const root = rootIdentifier(node.expression);
    const origin = root ? bindings.packages.get(root) : undefined;
    const looksLikeSocket = /websocket|wss|socket/i.test(node.expression.getText(source));
    if (origin !== "ws" && origin !== "socket.io" && !looksLikeSocket) return;
    for (const argument of node.arguments ?? []) {
      const value = unwrap(argument);
      if (!ts.isObjectLiteralExpression(value)) continue;
      const path = string(propertyOf(value, "path"));
      if (path?.startsWith("/")) {
        facts.channels.push({ path, line: lineOf(source, node), framework: origin ?? "ws" });
      }
    }
  };

  const inspectCall = (node: ts.CallExpression): void => {
    const callee = unwrap(node.expression);
    if (ts.isIdentifier(callee) || requireSpecifier(callee) !== undefined) {
      inspectPlainCall(node, callee);
      return;
    }
    if (ts.isElementAccessExpression(callee)) {
      inspectComputedMethod(node, callee);
      return;
    }
    if (!ts.isPropertyAccessExpression(callee)) return;
    const member = callee.name.text;
    const args = node.arguments;
    noteBodyParser(rootIdentifier(callee.expression), member);
    for (const argument of args) if (ts.isIdentifier(argument)) noteBodyParser(argument.text, undefined);
    if (member === "createServer") inspectRequestHandler(args[args.length - 1], "node:http");
    if (member === "on" && string(args[0]) === "request") inspectRequestHandler(args[1], "node:http");
    if (member === "on" && string(args[0]) === "upgrade") inspectUpgradeHandler(args[1]);
    const chain = receiverChain(callee.expression);
    if (!chain) return;
    const container = containerOf(chain.receiver, node);
    const method = HTTP_METHODS[member];
    const accepts = (last: ts.Expression | undefined): boolean =>
      acceptsReceiver(chain.receiver, container, last);

    if (method && chain.routePath !== undefined && args.length >= 1) {
      if (accepts(args[args.length - 1])) addRoute(container, method, chain, chain.routePath, node, args);
      return;
    }
    if (method && args.length >= 2) {
      // Express also takes an array of paths: `app.get(["/a", "/b"], handler)`; a loop over literal names
      // declares one route per name.
      for (const path of pathValues(args[0] as ts.Expression, node, model)) {
        if (path === undefined || !(path.startsWith("/") || path === "*")) continue;
        if (isWebSocketRoute(args)) {
          addChannel(joinAll(chain.basePaths, path), node, bindings.serverFrameworks[0] ?? "websocket");
        } else if (accepts(args[args.length - 1])) {
          addRoute(container, method, chain, path, node, args.slice(1));
        }
      }
      return;
    }
    if (
      member === "route" &&
      args.length === 1 &&
      ts.isObjectLiteralExpression(unwrap(args[0] as ts.Expression))
    ) {
      const options = unwrap(args[0] as ts.Expression) as ts.ObjectLiteralExpression;
      const path = string(propertyOf(options, "url") ?? propertyOf(options, "path"));
      if (path === undefined || !path.startsWith("/")) return;
      if (isWebSocketRoute([options])) {
        addChannel(joinAll(chain.basePaths, path), node, fileFramework ?? "fastify");
        return;
      }
      for (const listed of methodList(propertyOf(options, "method"), bindings.constants)) {
        addRoute(container, listed === "*" ? "ALL" : listed, chain, path, node, [options]);
      }
      return;
    }
    if (member === "on" && args.length >= 3) {
      const path = string(args[1]);
      const methods = methodList(args[0], bindings.constants);
      if (path?.startsWith("/") && methods.length > 0 && accepts(args[args.length - 1])) {
        for (const listed of methods) addRoute(container, listed, chain, path, node, args.slice(2));
      }
      return;
    }
    if (member === "ws" && args.length >= 2) {
      const path = string(args[0]);
      if (path?.startsWith("/")) addChannel(joinAll(chain.basePaths, path), node, fileFramework ?? "express");
      return;
    }
    if (member === "use" || (member === "route" && args.length === 2)) {
      const prefixes = pathValues(args[0] as ts.Expression, node, model);
      const children = prefixes.length === 0 ? [...args] : args.slice(1);
      for (const prefix of prefixes.length === 0 ? [""] : prefixes)
        for (const child of children) mount(container, child, joinAll(chain.basePaths, prefix));
      return;
    }
    if (member === "register" && args.length >= 1) {
      noteRegistered(args[0]);
      const options = args[1] && unwrap(args[1]);
      const prefix =
        options && ts.isObjectLiteralExpression(options) ? string(propertyOf(options, "prefix")) : undefined;
      mount(container, args[0] as ts.Expression, joinAll(chain.basePaths, prefix ?? ""));
      return;
    }
    if (member === "prefix" && args.length === 1) {
      const prefix = string(args[0]);
      const existing = facts.containers.get(container);
      if (prefix !== undefined) facts.containers.set(container, { framework: existing?.framework, prefix });
    }
  };

  /** `registerRoutes(app)`, `require("./routes")(app)`: the called module or function serves on `app`. */
  /** `router[route.method](route.path, route.handler)` in a loop over a literal table of routes. */
  const inspectComputedMethod = (node: ts.CallExpression, callee: ts.ElementAccessExpression): void => {
    const chain = receiverChain(callee.expression);
    if (!chain || node.arguments.length < 2) return;
    const container = containerOf(chain.receiver, node);
    for (const bound of loopExpansions(node, model)) {
      const strings = stringsOf(bound, bindings.constants);
      const method = HTTP_METHODS[staticString(callee.argumentExpression, strings)?.toLowerCase() ?? ""];
      const path = staticString(node.arguments[0] as ts.Expression, strings);
      if (!method || path === undefined || !path.startsWith("/")) continue;
      const handlers = node.arguments.slice(1).map((argument) => {
        const name = receiverName(argument);
        return (name && bound.get(name)) || argument;
      });
      if (acceptsReceiver(chain.receiver, container, handlers[handlers.length - 1]))
        addRoute(container, method, chain, path, handlers[handlers.length - 1] ?? node, handlers);
    }
  };

  /** `express.json()`, `bodyParser.urlencoded()`, `bodyParser()`, koa-bodyparser, `@fastify/formbody`. */
  const noteBodyParser = (root: string | undefined, member: string | undefined): void => {
    const origin = root ? bindings.packages.get(root) : undefined;
    if (!origin) return;
    const add = (...encodings: BodyEncoding[]): void => {
      for (const encoding of encodings)
        if (!facts.bodyParsers.includes(encoding)) facts.bodyParsers.push(encoding);
    };
    const name = member ?? root;
    if (origin === "express" || origin === "body-parser") {
      if (name === "json") add("json");
      if (name === "urlencoded") add("form");
      if (member === undefined && origin === "body-parser") add("json", "form");
    }
    if (/^(koa-bodyparser|@koa\/bodyparser|koa-body)$/.test(origin) && member === undefined)
      add("json", "form");
    if (/formbody$/.test(origin)) add("form");
  };

  const inspectPlainCall = (node: ts.CallExpression, callee: ts.Expression): void => {
    if (ts.isIdentifier(callee)) noteBodyParser(callee.text, undefined);
    for (const argument of node.arguments)
      if (ts.isIdentifier(argument)) noteBodyParser(argument.text, undefined);
    if (ts.isIdentifier(callee) && /createServer$/.test(callee.text)) {
      inspectRequestHandler(node.arguments[node.arguments.length - 1], "node:http");
    }
    const child = childReference(callee, bindings);
    if (!child) return;
    for (const argument of node.arguments) {
      const name = receiverName(argument);
      if (name === undefined) continue;
      const parent = containerOf(name, node);
      if (facts.containers.has(parent) || parent !== name) facts.mounts.push({ parent, child, prefix: "" });
    }
  };

  const inspectRequestHandler = (argument: ts.Expression | undefined, framework: string): void => {
    const handler = handlerFunction(argument, bindings.functions);
    if (!handler) return;
    const container = `${framework}@${lineOf(source, handler)}`;
    for (const found of dispatchedPaths(handler, source, bindings.functions, bindings.constants, objects)) {
      const target = found.target;
      const inputs = !target
        ? undefined
        : "handler" in target
          ? routeArgumentInputs(model, [target.handler])
          : branchInputs(model, target.within, target.branch);
      facts.routes.push({
        container,
        method: found.method,
        path: found.path,
        line: found.line,
        framework,
        inputs,
      });
    }
  };

  const inspectUpgradeHandler = (argument: ts.Expression | undefined): void => {
    const handler = handlerFunction(argument, bindings.functions);
    if (!handler) return;
    for (const found of dispatchedPaths(handler, source, bindings.functions, bindings.constants, objects)) {
      facts.channels.push({ path: found.path, line: found.line, framework: "ws" });
    }
  };

  // One registration may declare several routes (paths, methods): its arguments are read once.
  const inputsByCall = new Map<ts.Node, InputsDraft>();
  const addRoute = (
    container: string,
    method: string,
    chain: ReceiverChain,
    path: string,
    node: ts.Node,
    handlers: readonly ts.Expression[],
  ): void => {
    let inputs = inputsByCall.get(node);
    if (!inputs) {
      inputs = routeArgumentInputs(model, handlers);
      inputsByCall.set(node, inputs);
    }
    facts.routes.push({
      inputs,
      container,
      method,
      path: normalizePathTemplate(joinAll(chain.basePaths, path), "colon"),
      line: lineOf(source, node),
      framework:
        facts.containers.get(container)?.framework ?? frameworkByName(chain.receiver) ?? fileFramework,
      ...(pendingReceivers.has(chain.receiver) ? { onlyIfContainer: true } : {}),
    });
  };

  const addChannel = (path: string, node: ts.Node, framework: string): void => {
    facts.channels.push({
      path: normalizePathTemplate(path, "colon"),
      line: lineOf(source, node),
      framework,
    });
  };

  const mount = (parent: string, argument: ts.Expression, prefix: string): void => {
    const value = unwrap(argument);
    // koa-mount: `app.use(mount("/api", api))`.
    if (
      ts.isCallExpression(value) &&
      ts.isIdentifier(value.expression) &&
      value.expression.text === "mount"
    ) {
      const inner = string(value.arguments[0]);
      const target = value.arguments[value.arguments.length - 1];
      if (inner !== undefined && target) mount(parent, target, joinAll([prefix], inner));
      return;
    }
    const child = childReference(value, bindings);
    if (child) facts.mounts.push({ parent, child, prefix: normalizePathTemplate(prefix || "/", "colon") });
  };

  /** The container a receiver denotes at `node`: a parameter of an enclosing function, else the name. */
  const containerOf = (receiver: string, node: ts.Node): string => {
    const root = receiver.split(".")[0] ?? receiver;
    for (let current: ts.Node | undefined = node.parent; current; current = current.parent) {
      if (!isFunctionNode(current)) continue;
      const isParameter = current.parameters.some(
        (parameter) => ts.isIdentifier(parameter.name) && parameter.name.text === root,
      );
      if (isParameter) return functionKey(current);
    }
    return receiver;
  };

  /** Keys of inline functions handed to `register`/`use` (plugins): their first parameter serves routes. */
  const registeredFunctions = new Set<string>();
  const noteRegistered = (argument: ts.Expression | undefined): void => {
    const value = argument && unwrap(argument);
    if (value && isFunctionNode(value)) registeredFunctions.add(functionKey(value));
  };

  const acceptsReceiver = (
    receiver: string,
    container: string,
    lastArgument: ts.Expression | undefined,
  ): boolean => {
    const root = receiver.split(".")[0] ?? receiver;
    const isParameter = container !== receiver;
    if (facts.containers.has(container)) return true;
    // A package object (`http.get(url, callback)`) or an HTTP client sends requests; it serves none.
    if (!isParameter && (bindings.clients.has(root) || bindings.packages.has(root))) return false;
    if (!isHandlerLike(lastArgument, bindings)) return false;
    if (bindings.serverFrameworks.length > 0) return true;
    if (SERVER_NAME.test(receiver.split(".").pop() ?? receiver)) return true;
    // `app.register(async (inner) => { inner.get(…) })`: the parameter of a plugin is a server.
    if (isParameter && registeredFunctions.has(container)) return true;
    // An object imported from another file of the tree: a route only if that file made it a server.
    if (!isParameter && bindings.imports.has(receiver)) pendingReceivers.add(receiver);
    return pendingReceivers.has(receiver);
  };

  visit(source);
  return facts;
}
