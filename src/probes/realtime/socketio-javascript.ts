import path from "node:path";
import ts from "typescript";
import {
  collectStringConstants,
  isFunctionNode,
  lineOf,
  propertyOf,
  requireSpecifier,
  rootIdentifier,
  staticString,
  unwrap,
} from "../routes/javascript-syntax.ts";

// What one JavaScript/TypeScript file says about socket.io, read from its syntax tree: servers and their
// Engine.IO path (`new Server(http, { path })`, `require("socket.io")(server, opts)`, NestJS gateways),
// namespaces (`io.of("/ns")`), the events it listens for on a connected socket (`socket.on("x")`,
// `@SubscribeMessage("x")`) and emits (`socket.emit`, `io.to(room).emit`, `io.of("/ns").emit`), and where
// it reads a client's credential (`socket.handshake.auth.token`, `handshake.query`, headers, cookies).

export interface SocketIoFileFacts {
  /** The file imports the socket.io server (or a NestJS gateway). */
  importsServer: boolean;
  /** The file is a socket.io client or a plain `ws` server: its `on(...)` calls are not server events. */
  otherSocketLibrary: boolean;
  servers: Array<{ path: string; line: number; explicitPath: boolean }>;
  namespaces: string[];
  events: string[];
  /** Placements (`auth:token`, `query:token`, `header:authorization`, `header:cookie`, `event:<name>`). */
  credentials: string[];
  /** An `io.use(...)`/`nsp.use(...)` middleware: the server checks connections before they are accepted. */
  middleware: boolean;
  /** Connections to the main namespace are handled (`io.on("connection")`, not only `io.of("/x")`). */
  rootNamespace: boolean;
}

export const DEFAULT_SOCKET_IO_PATH = "/socket.io";

/** Events socket.io itself emits on a server socket: never application events. */
const RESERVED_EVENTS = new Set([
  "connect",
  "connection",
  "disconnect",
  "disconnecting",
  "connect_error",
  "error",
  "newListener",
  "removeListener",
]);
const SERVER_MODULES = new Set(["socket.io"]);
const GATEWAY_MODULES = new Set(["@nestjs/websockets"]);
const OTHER_MODULES = new Set(["socket.io-client", "ws", "net", "engine.io-client"]);
/** Names a connected server-side socket conventionally goes by (handlers split into modules receive it). */
const SOCKET_NAMES = new Set(["socket", "client"]);
/** Names the socket.io server conventionally goes by when passed between modules. */
const SERVER_NAMES = new Set(["io", "sio", "socketServer", "ioServer", "socketio"]);
const AUTH_EVENT = /^(auth|authenticate|authentication|authorize|login|identify)$/i;
/** Members of a string: a handler using them takes the credential itself, not an object carrying it. */
const STRING_MEMBERS = new Set(["length", "trim", "split", "slice", "startsWith", "replace", "toString"]);

export function socketIoFileFacts(file: string, text: string): SocketIoFileFacts {
  const facts: SocketIoFileFacts = {
    importsServer: false,
    otherSocketLibrary: false,
    servers: [],
    namespaces: [],
    events: [],
    credentials: [],
    middleware: false,
    rootNamespace: false,
  };
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
  const constants = collectStringConstants(source);
  /** Local names bound to the socket.io module (`Server`, `socketIo`, `io` of `import * as io`). */
  const bindings = new Set<string>();
  /** Local names of servers and namespaces created here. */
  const roots = new Set(SERVER_NAMES);
  const namespaceNames = new Set<string>();
  /** Parameters of connection handlers: connected sockets. */
  const sockets = new Set<string>();
  let gateway = false;

  const moduleOf = (specifier: string): void => {
    if (SERVER_MODULES.has(specifier)) facts.importsServer = true;
    if (GATEWAY_MODULES.has(specifier)) {
      facts.importsServer = true;
      gateway = true;
    }
    if (OTHER_MODULES.has(specifier)) facts.otherSocketLibrary = true;
  };
  const bindNames = (name: ts.BindingName): void => {
    if (ts.isIdentifier(name)) bindings.add(name.text);
    else for (const element of name.elements) if (ts.isBindingElement(element)) bindNames(element.name);
  };

  const collectBindings = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text;
      moduleOf(specifier);
      const clause = node.importClause;
      if (SERVER_MODULES.has(specifier) && clause) {
        if (clause.name) bindings.add(clause.name.text);
        const named = clause.namedBindings;
        if (named && ts.isNamespaceImport(named)) bindings.add(named.name.text);
        if (named && ts.isNamedImports(named))
          for (const element of named.elements) bindings.add(element.name.text);
      }
    }
    if (ts.isCallExpression(node)) {
      const specifier = requireSpecifier(node);
      if (specifier !== undefined) {
        moduleOf(specifier);
        const parent = node.parent;
        if (SERVER_MODULES.has(specifier) && ts.isVariableDeclaration(parent)) bindNames(parent.name);
      }
    }
    ts.forEachChild(node, collectBindings);
  };
  collectBindings(source);

  const eventName = (argument: ts.Expression | undefined): string | undefined => {
    const name = staticString(argument, constants);
    return name && !RESERVED_EVENTS.has(name) && name.length <= 100 ? name : undefined;
  };
  const addEvent = (name: string | undefined): void => {
    if (name && !facts.events.includes(name)) facts.events.push(name);
  };
  const addNamespace = (name: string | undefined): void => {
    if (name?.startsWith("/") && !facts.namespaces.includes(name)) facts.namespaces.push(name);
  };
  const addCredential = (placement: string): void => {
    if (!facts.credentials.includes(placement)) facts.credentials.push(placement);
  };

  /** `new Server(http, { path })`, `socketIo(server, opts)`, `require("socket.io")(server)`: a server. */
  const isServerFactory = (callee: ts.Expression): boolean => {
    const node = unwrap(callee);
    if (requireSpecifier(node) !== undefined) return SERVER_MODULES.has(requireSpecifier(node)!);
    const root = rootIdentifier(node);
    if (root === undefined || !bindings.has(root)) return false;
    return ts.isIdentifier(node) || (ts.isPropertyAccessExpression(node) && node.name.text === "Server");
  };
  const addServer = (node: ts.CallExpression | ts.NewExpression): void => {
    let serverPath: string | undefined;
    for (const argument of node.arguments ?? []) {
      const value = unwrap(argument);
      if (ts.isObjectLiteralExpression(value))
        serverPath ??= staticString(propertyOf(value, "path"), constants);
    }
    facts.servers.push({
      path: normalizeSocketIoPath(serverPath),
      line: lineOf(source, node),
      explicitPath: serverPath !== undefined,
    });
  };
  /** Whether a call chain starts at a socket.io server, a namespace or a connected socket. */
  const reachesSocketIo = (expression: ts.Expression): boolean => {
    const root = rootIdentifier(expression);
    if (root !== undefined && (roots.has(root) || sockets.has(root))) return true;
    let node = unwrap(expression);
    while (ts.isPropertyAccessExpression(node) || ts.isCallExpression(node)) {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const member = node.expression.name.text;
        if (
          member === "of" ||
          (member === "get" &&
            /^['"`](io|socketio|socket\.io)['"`]$/.test(node.arguments[0]?.getText(source) ?? ""))
        )
          return true;
      }
      node = unwrap(node.expression);
    }
    return false;
  };
  const handlerOf = (argument: ts.Expression | undefined): ts.FunctionLikeDeclaration | undefined => {
    if (!argument) return undefined;
    const value = unwrap(argument);
    if (isFunctionNode(value)) return value;
    if (ts.isIdentifier(value)) return functions.get(value.text);
    return undefined;
  };
  const functions = new Map<string, ts.FunctionLikeDeclaration>();
  const collectFunctions = (node: ts.Node): void => {
    if (ts.isFunctionDeclaration(node) && node.name) functions.set(node.name.text, node);
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const value = unwrap(node.initializer);
      if (isFunctionNode(value)) functions.set(node.name.text, value);
    }
    ts.forEachChild(node, collectFunctions);
  };
  collectFunctions(source);

  /** `io.on("connection", (socket) => …)`, `nsp.on("connect", handler)`: the handler's socket parameter. */
  const isConnectionHandler = (node: ts.CallExpression): boolean => {
    const callee = unwrap(node.expression);
    if (!ts.isPropertyAccessExpression(callee) || !["on", "once"].includes(callee.name.text)) return false;
    const name = staticString(node.arguments[0], constants);
    return (name === "connection" || name === "connect") && reachesSocketIo(callee.expression);
  };
  /** First pass: servers, namespaces kept in variables, and the sockets connection handlers receive. */
  const collectRoots = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const value = unwrap(node.initializer);
      const created =
        (ts.isNewExpression(value) || ts.isCallExpression(value)) && isServerFactory(value.expression);
      const namespace =
        ts.isCallExpression(value) &&
        ts.isPropertyAccessExpression(value.expression) &&
        value.expression.name.text === "of" &&
        reachesSocketIo(value.expression.expression);
      if (created || namespace) roots.add(node.name.text);
      if (namespace) namespaceNames.add(node.name.text);
    }
    if (ts.isCallExpression(node) && isConnectionHandler(node)) {
      const parameter = handlerOf(node.arguments[1])?.parameters[0]?.name;
      if (parameter && ts.isIdentifier(parameter)) sockets.add(parameter.text);
      const receiver = (unwrap(node.expression) as ts.PropertyAccessExpression).expression;
      const viaNamespace =
        namespaceNames.has(rootIdentifier(receiver) ?? "") || /\.of\s*\(/.test(receiver.getText(source));
      if (!viaNamespace) facts.rootNamespace = true;
    }
    ts.forEachChild(node, collectRoots);
  };

  const inspectCall = (node: ts.CallExpression): void => {
    if (isServerFactory(node.expression)) addServer(node);
    const callee = unwrap(node.expression);
    // `@SubscribeMessage("event")` and `@WebSocketGateway({ namespace, path })` on a NestJS gateway.
    if (gateway && ts.isIdentifier(callee) && ts.isDecorator(node.parent)) {
      if (callee.text === "SubscribeMessage") addEvent(eventName(node.arguments[0]));
      if (callee.text === "WebSocketGateway") addGateway(node);
      return;
    }
    if (!ts.isPropertyAccessExpression(callee)) return;
    const member = callee.name.text;
    const receiver = callee.expression;
    const [first, second] = node.arguments;
    if (member === "of" && reachesSocketIo(receiver)) addNamespace(staticString(first, constants));
    if (member === "use" && reachesSocketIo(receiver)) facts.middleware = true;
    if (member === "path" && roots.has(rootIdentifier(receiver) ?? "") && first) {
      const serverPath = staticString(first, constants);
      if (serverPath)
        facts.servers.push({
          path: normalizeSocketIoPath(serverPath),
          line: lineOf(source, node),
          explicitPath: true,
        });
    }
    if ((member === "on" || member === "once") && !isConnectionHandler(node) && socketReceiver(receiver)) {
      const name = eventName(first);
      addEvent(name);
      if (name && AUTH_EVENT.test(name)) addCredential(authEventPlacement(name, handlerOf(second), source));
    }
    if (member === "emit" && (socketReceiver(receiver) || reachesSocketIo(receiver)))
      addEvent(eventName(first));
  };
  /** A connected socket: a connection handler's parameter, or one conventionally named `socket`. */
  const socketReceiver = (receiver: ts.Expression): boolean => {
    const node = unwrap(receiver);
    return ts.isIdentifier(node) && (sockets.has(node.text) || SOCKET_NAMES.has(node.text));
  };
  const addGateway = (node: ts.CallExpression): void => {
    const options = node.arguments.map(unwrap).find(ts.isObjectLiteralExpression);
    const namespace = options ? staticString(propertyOf(options, "namespace"), constants) : undefined;
    if (namespace) addNamespace(namespace.startsWith("/") ? namespace : `/${namespace}`);
    const gatewayPath = options ? staticString(propertyOf(options, "path"), constants) : undefined;
    facts.servers.push({
      path: normalizeSocketIoPath(gatewayPath),
      line: lineOf(source, node),
      explicitPath: gatewayPath !== undefined,
    });
  };
  const inspectCredentials = (node: ts.Node): void => {
    // `socket.handshake.auth.token`, `handshake.query?.token`, `handshake.headers.authorization`,
    // `socket.request.headers.cookie` (not an HTTP handler's own `request.headers`).
    if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) {
      const text = node.getText(source);
      const match =
        /handshake\??\.(auth|query|headers)\??\.?\[?['"`]?([A-Za-z_][\w-]*)/.exec(text) ??
        /\.request\??\.(headers)\??\.?\[?['"`]?(cookie|authorization)\b/i.exec(text);
      if (match && (node.parent === undefined || !ts.isPropertyAccessExpression(node.parent))) {
        const [, where, name] = match;
        if (where === "auth") addCredential(`auth:${name}`);
        if (where === "query") addCredential(`query:${name}`);
        if (where === "headers") addCredential(`header:${name!.toLowerCase()}`);
      }
    }
    // `const { token } = socket.handshake.auth`.
    if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer) {
      const where = /handshake\??\.(auth|query)$/.exec(unwrap(node.initializer).getText(source))?.[1];
      if (where) {
        for (const element of node.name.elements) {
          const name = element.propertyName ?? element.name;
          if (ts.isIdentifier(name)) addCredential(`${where}:${name.text}`);
        }
      }
    }
  };

  collectRoots(source);
  const visit = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && isServerFactory(node.expression)) addServer(node);
    if (ts.isCallExpression(node)) inspectCall(node);
    inspectCredentials(node);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return facts;
}

/**
 * `event:<name>:<field>` when the handler reads a field of what it is sent (`({ token }) =>`, `data.token`),
 * `event:<name>` when it takes the credential itself (`(token) =>`).
 */
function authEventPlacement(
  name: string,
  handler: ts.FunctionLikeDeclaration | undefined,
  source: ts.SourceFile,
): string {
  const parameter = handler?.parameters[0]?.name;
  if (parameter && ts.isObjectBindingPattern(parameter)) {
    const first = parameter.elements[0];
    const field = first ? (first.propertyName ?? first.name) : undefined;
    if (field && ts.isIdentifier(field)) return `event:${name}:${field.text}`;
  }
  if (parameter && ts.isIdentifier(parameter) && handler?.body) {
    const escaped = parameter.text.replace(/[$]/g, "\\$");
    const read = new RegExp(`\\b${escaped}\\??\\.([A-Za-z_]\\w*)`).exec(handler.body.getText(source));
    if (read && !STRING_MEMBERS.has(read[1]!)) return `event:${name}:${read[1]}`;
    return `event:${name}`;
  }
  return `event:${name}:token`;
}

/** `socket.io` → `/socket.io`; a trailing slash dropped; nothing given → the default path. */
export function normalizeSocketIoPath(value: string | undefined): string {
  if (!value) return DEFAULT_SOCKET_IO_PATH;
  const withSlash = value.startsWith("/") ? value : `/${value}`;
  return withSlash.replace(/\/+$/, "") || "/";
}

function scriptKind(file: string): ts.ScriptKind {
  const extension = path.extname(file);
  if (extension === ".tsx") return ts.ScriptKind.TSX;
  if (extension === ".jsx") return ts.ScriptKind.JSX;
  if ([".ts", ".mts", ".cts"].includes(extension)) return ts.ScriptKind.TS;
  return ts.ScriptKind.JS;
}
