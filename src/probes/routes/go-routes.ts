import type { Route } from "../../map/system-map.ts";
import { joinPaths, normalizePathTemplate } from "./path-template.ts";
import { C_SYNTAX, MaskedSource, skipSpace, textRoute, uniqueRoutes } from "./source-text.ts";
import { readSource } from "./source-tree.ts";

// Go routers: net/http (`http.HandleFunc("/x", h)`, Go 1.22 `mux.HandleFunc("GET /items/{id}", h)`),
// gorilla/mux (`.Methods("GET")`, `PathPrefix("/api").Subrouter()`), gin and echo (`r.GET("/x/:id", h)`),
// chi and fiber (`r.Get("/x", h)`, `r.Route("/api", func(r chi.Router) {…})`), httprouter, and groups
// (`api := r.Group("/api")`) with their prefix. Only files that import one of these routers are read, and a
// registration needs a literal path and a handler after it, so a client's `http.Get(url)` is no route.

const GO_SYNTAX = { ...C_SYNTAX, rawQuotes: "`" };

const ROUTERS: Array<[RegExp, string]> = [
  [/"github\.com\/gin-gonic\/gin"/, "gin"],
  [/"github\.com\/labstack\/echo(?:\/v\d+)?"/, "echo"],
  [/"github\.com\/gofiber\/fiber(?:\/v\d+)?"/, "fiber"],
  [/"github\.com\/go-chi\/chi(?:\/v\d+)?"/, "chi"],
  [/"github\.com\/gorilla\/mux"/, "gorilla"],
  [/"github\.com\/julienschmidt\/httprouter"/, "httprouter"],
  [/"net\/http"/, "net/http"],
];

/** Frameworks whose paths spell parameters `:id` and wildcards `*rest`. */
const COLON_STYLE = new Set(["gin", "echo", "fiber", "httprouter"]);

const VERBS: Record<string, string> = {
  GET: "GET",
  POST: "POST",
  PUT: "PUT",
  DELETE: "DELETE",
  PATCH: "PATCH",
  HEAD: "HEAD",
  OPTIONS: "OPTIONS",
  Get: "GET",
  Post: "POST",
  Put: "PUT",
  Delete: "DELETE",
  Patch: "PATCH",
  Head: "HEAD",
  Options: "OPTIONS",
  Any: "ALL",
  All: "ALL",
};

const REGISTRATION =
  /\b([A-Za-z_]\w*)\s*\.\s*(GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS|Get|Post|Put|Delete|Patch|Head|Options|Any|All|HandleFunc|Handle|HandlerFunc|Method|MethodFunc)\s*\(/g;
const GROUP_ASSIGNMENT = /\b([A-Za-z_]\w*)\s*:?=\s*([A-Za-z_]\w*)\s*\.\s*(Group|PathPrefix)\s*\(\s*(?=["`])/g;
const SCOPED_GROUP = /\b([A-Za-z_]\w*)\s*\.\s*(Route|Group)\s*\(/g;

interface Binding {
  name: string;
  prefix: string;
  at: number;
  /** A closure parameter is bound only inside the closure. */
  scope?: [number, number];
}

export function scanGoRoutes(root: string, files: readonly string[]): Route[] {
  const sources: Array<{ file: string; masked: MaskedSource; imported: string[] }> = [];
  for (const file of files) {
    if (file.endsWith("_test.go")) continue;
    const source = readSource(root, file);
    if (source === undefined) continue;
    const imported = ROUTERS.filter(([pattern]) => pattern.test(source)).map(([, name]) => name);
    sources.push({ file, masked: new MaskedSource(source, GO_SYNTAX), imported });
  }
  // Handlers live anywhere in the package: their bodies say which methods a bare registration serves.
  const handlers = new Map<string, string>();
  for (const { masked } of sources)
    for (const [name, body] of namedFunctionBodies(masked)) if (!handlers.has(name)) handlers.set(name, body);
  const routes: Route[] = [];
  for (const { file, masked, imported } of sources)
    if (imported.length > 0) routes.push(...routesOf(file, masked, imported, handlers));
  return uniqueRoutes(routes);
}

function routesOf(
  file: string,
  masked: MaskedSource,
  imported: string[],
  handlers: ReadonlyMap<string, string>,
): Route[] {
  const framework = imported[0] ?? "net/http";
  const bindings = groupBindings(masked);
  const prefixOf = (name: string, at: number): string => prefixAt(bindings, name, at);
  const routes: Route[] = [];
  for (const match of masked.code.matchAll(REGISTRATION)) {
    const receiver = match[1] ?? "";
    const verb = match[2] ?? "";
    const open = match.index + match[0].length - 1;
    const close = masked.closing(open);
    if (close < 0) continue;
    const args = masked.split(open + 1, close);
    if (args.length < 2) continue;
    let methods: string[];
    let pathArgument: [number, number];
    if (verb === "Method" || verb === "MethodFunc" || (verb === "Handle" && args.length >= 3)) {
      const method = masked.stringAt(args[0]?.[0] ?? open)?.value;
      if (!method || !/^[A-Z]+$/.test(method)) continue;
      methods = [method];
      pathArgument = args[1] as [number, number];
    } else if (verb in VERBS) {
      if (receiver === "http") continue;
      methods = [VERBS[verb] as string];
      pathArgument = args[0] as [number, number];
    } else {
      methods = chainedMethods(masked, close) ?? ["ALL"];
      pathArgument = args[0] as [number, number];
    }
    const handler = handlers.get(handlerName(masked, args[1]) ?? "");
    const literal = masked.stringAt(pathArgument[0]);
    if (!literal || skipSpace(masked.code, literal.end) !== pathArgument[1]) continue;
    let raw = literal.value;
    const patterned = /^([A-Z]+)\s+(\S+)$/.exec(raw);
    if (patterned && (verb === "HandleFunc" || verb === "Handle")) {
      methods = [patterned[1] as string];
      raw = patterned[2] as string;
    }
    if (!raw.startsWith("/")) continue;
    if (methods.length === 1 && methods[0] === "ALL" && handler) methods = methodsServed(handler) ?? methods;
    const path = goTemplate(joinPaths(prefixOf(receiver, match.index), raw), framework);
    const line = masked.lineAt(match.index);
    for (const method of methods) routes.push(textRoute(method, path, file, line, framework));
    // A subtree pattern (`/api/items/`) whose handler cuts its own prefix off the path and parses the rest
    // as a number serves one item per id below it: `/api/items/{id}`.
    if (handler && raw.length > 1 && raw.endsWith("/") && parsesIdAfter(handler, raw))
      for (const method of methods)
        routes.push(textRoute(method, `${path.replace(/\/$/, "")}/{id}`, file, line, framework));
  }
  return routes;
}

const METHOD_NAMES = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);
const METHOD_CONSTANT = /\bhttp\.Method([A-Z][a-z]+)\b|"([A-Z]{3,7})"/g;

/** Top-level functions and methods by name, with their bodies (comments blanked, strings kept). */
function namedFunctionBodies(masked: MaskedSource): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  for (const match of masked.code.matchAll(/^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\([^{\n]*\{/gm)) {
    const open = match.index + match[0].length - 1;
    const close = masked.closing(open);
    if (close > open) found.push([match[1] ?? "", masked.text.slice(open, close + 1)]);
  }
  return found;
}

/** The function a handler argument names: `list`, `s.list`, `http.HandlerFunc(list)`. */
function handlerName(masked: MaskedSource, argument: [number, number] | undefined): string | undefined {
  if (!argument) return undefined;
  const names = masked.code.slice(argument[0], argument[1]).match(/[A-Za-z_]\w*/g);
  return names?.at(-1);
}

/**
 * The methods a handler serves, read from how it tests `r.Method`: `r.Method != http.MethodPost`, `== "GET"`,
 * or the cases of a `switch r.Method`. Undefined when it never looks.
 */
function methodsServed(body: string): string[] | undefined {
  const found = new Set<string>();
  const add = (text: string) => {
    for (const constant of text.matchAll(METHOD_CONSTANT)) {
      const method = (constant[1] ?? constant[2] ?? "").toUpperCase();
      if (METHOD_NAMES.has(method)) found.add(method);
    }
  };
  for (const comparison of body.matchAll(/\.Method\s*[!=]=\s*(http\.Method[A-Z][a-z]+|"[A-Z]+")/g))
    add(comparison[1] ?? "");
  const switched = /\bswitch\s+[A-Za-z_]\w*\.Method\s*\{/.exec(body);
  if (switched)
    for (const label of body.slice(switched.index).matchAll(/\bcase\s+([^:\n]+):/g)) add(label[1] ?? "");
  return found.size > 0 ? [...found].sort() : undefined;
}

/** The handler cuts `prefix` (or its parent) off the request path and converts what is left to a number. */
function parsesIdAfter(body: string, prefix: string): boolean {
  const bare = prefix.replace(/\/$/, "");
  return (
    new RegExp(
      `TrimPrefix\\(\\s*\\w+\\.URL\\.Path\\s*,\\s*"${bare.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/?"`,
    ).test(body) && /\bstrconv\.(Atoi|ParseInt|ParseUint)\s*\(/.test(body)
  );
}

/** gorilla's `.Methods("GET", "POST")` chained after a registration. */
function chainedMethods(masked: MaskedSource, close: number): string[] | undefined {
  const chained = /^\s*\.\s*Methods\s*\(/.exec(masked.code.slice(close + 1, close + 200));
  if (!chained) return undefined;
  const open = close + chained[0].length;
  const end = masked.closing(open);
  const constants = [...masked.code.slice(open + 1, end).matchAll(/\bhttp\.Method([A-Z][a-z]+)\b/g)];
  const methods = [...masked.stringsIn(open + 1, end), ...constants.map((constant) => constant[1] ?? "")].map(
    (method) => method.toUpperCase(),
  );
  return methods.length > 0 ? methods : undefined;
}

function groupBindings(masked: MaskedSource): Binding[] {
  const code = masked.code;
  const bindings: Binding[] = [];
  const events: Array<{ at: number; apply: () => void }> = [];
  const functions = functionBodies(masked);
  for (const match of code.matchAll(GROUP_ASSIGNMENT)) {
    const literal = masked.stringAt(match.index + match[0].length);
    if (!literal) continue;
    if (
      match[3] === "PathPrefix" &&
      !/^\s*\)\s*\.\s*Subrouter\s*\(/.test(code.slice(literal.end, literal.end + 40))
    )
      continue;
    const scope = functions.find(([start, end]) => start < match.index && match.index < end);
    events.push({
      at: match.index,
      apply: () =>
        bindings.push({
          name: match[1] ?? "",
          prefix: joinPaths(prefixAt(bindings, match[2] ?? "", match.index), literal.value),
          at: match.index,
          ...(scope ? { scope } : {}),
        }),
    });
  }
  for (const match of code.matchAll(SCOPED_GROUP)) {
    let position = match.index + match[0].length;
    const literal = masked.stringAt(position);
    if (literal) {
      position = skipSpace(code, literal.end);
      if (code[position] !== ",") continue;
      position += 1;
    }
    const closure = /^\s*func\s*\(\s*([A-Za-z_]\w*)\s/.exec(code.slice(position, position + 80));
    if (!closure) continue;
    const brace = code.indexOf("{", position + closure[0].length);
    const end = brace < 0 ? -1 : masked.closing(brace);
    if (end < 0) continue;
    events.push({
      at: match.index,
      apply: () =>
        bindings.push({
          name: closure[1] ?? "",
          prefix: joinPaths(prefixAt(bindings, match[1] ?? "", match.index), literal?.value ?? "/"),
          at: brace,
          scope: [brace, end],
        }),
    });
  }
  // In source order, so a group made from a group finds its parent's prefix already bound.
  for (const event of events.sort((left, right) => left.at - right.at)) event.apply();
  return bindings;
}

/** Bodies of top-level functions: a variable assigned in one means nothing in another. */
function functionBodies(masked: MaskedSource): Array<[number, number]> {
  const bodies: Array<[number, number]> = [];
  for (const match of masked.code.matchAll(/^func\b[^{\n]*\{/gm)) {
    const open = match.index + match[0].length - 1;
    const close = masked.closing(open);
    if (close > open) bodies.push([open, close]);
  }
  return bodies;
}

/** The prefix `name` carries at `at`: its latest binding (assignment or closure) whose scope holds `at`. */
function prefixAt(bindings: readonly Binding[], name: string, at: number): string {
  let found: Binding | undefined;
  for (const binding of bindings) {
    if (binding.name !== name || binding.at >= at) continue;
    if (binding.scope && !(binding.scope[0] < at && at < binding.scope[1])) continue;
    if (!found || binding.at > found.at) found = binding;
  }
  return found?.prefix ?? "";
}

function goTemplate(path: string, framework: string): string {
  if (COLON_STYLE.has(framework))
    return normalizePathTemplate(path, "colon").replace(/\*([A-Za-z_]\w*)/g, "{$1}");
  return normalizePathTemplate(
    path.replace(/\{\$\}/g, "").replace(/\{([A-Za-z_]\w*)\.\.\.\}/g, "{$1}"),
    "brace",
  );
}
