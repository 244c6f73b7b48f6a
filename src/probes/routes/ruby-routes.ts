import type { Route } from "../../map/system-map.ts";
import { pathParameterNames } from "../http/target-url.ts";
import { joinPaths, normalizePathTemplate } from "./path-template.ts";
import { type ControllerAction, ControllerSources } from "./rails-controllers.ts";
import { jsonBodyHelpers, RUBY_SYNTAX, rubyHandlerInputs } from "./ruby-inputs.ts";
import { MaskedSource, textRoute, uniqueRoutes } from "./source-text.ts";
import { readSource } from "./source-tree.ts";

// Ruby routes, line by line. Rails `config/routes.rb`: verbs (`get '/x', to: 'c#a'`, `match … via:`),
// `root`, `resources :items` (seven REST routes, `only:`/`except:`, nested blocks, `member`/`collection`),
// singular `resource`, `namespace :api` and `scope '/v1'` prefixes. Sinatra apps: `get '/x' do`.

/** The controller action each Rails route names, read from `config/routes.rb`. */
const railsTargets = new WeakMap<Route, ControllerAction>();

const VERB = /^(get|post|put|patch|delete|match)\s*\(?\s*(?:(['"])(.*?)\2|:(\w+))(.*)$/;

/** Rails REST actions: name, method, path suffix, whether on the member. */
const ACTIONS: Array<[string, string, string, boolean]> = [
  ["index", "GET", "", false],
  ["create", "POST", "", false],
  ["new", "GET", "/new", false],
  ["edit", "GET", "/edit", true],
  ["show", "GET", "", true],
  ["update", "PATCH", "", true],
  ["update", "PUT", "", true],
  ["destroy", "DELETE", "", true],
];

interface Scope {
  /** Prefix for routes declared inside. */
  prefix: string;
  /** Inside `resources … do`: the member path, for `member do`; the collection path, for `collection do`. */
  member?: string;
  collection?: string;
  /** Inside a Sinatra handler's block: the routes it serves, whose inputs its lines tell. */
  handler?: { routes: Array<{ method: string; path: string; line: number }>; from: number };
  /** Rails: the controllers' module (`api/v1/` inside `namespace :api`), and the enclosing resources' controller. */
  module?: string;
  controller?: string;
}

export function scanRubyRoutes(root: string, files: readonly string[]): Route[] {
  const routes: Route[] = [];
  for (const file of files) {
    const rails = /(?:^|\/)config\/routes(?:\.rb|\/[^/]+\.rb)$/.test(file);
    const source = readSource(root, file);
    if (source === undefined) continue;
    const sinatra = !rails && /require\s+['"]sinatra|<\s*Sinatra::(?:Base|Application)/.test(source);
    if (!rails && !sinatra) continue;
    const found = routesOf(file, new MaskedSource(source, RUBY_SYNTAX).text, rails ? "rails" : "sinatra");
    if (rails) {
      const app = file.replace(/(?:^|\/)config\/routes(?:\.rb|\/[^/]+\.rb)$/, "");
      const controllers = new ControllerSources(root, app);
      for (const route of found) {
        const target = railsTargets.get(route);
        if (target) Object.assign(route, controllers.inputsOf(route, target));
      }
    }
    routes.push(...found);
  }
  return uniqueRoutes(routes);
}

function routesOf(file: string, text: string, framework: string): Route[] {
  const routes: Route[] = [];
  const stack: Scope[] = [{ prefix: "" }];
  const lines = text.split("\n");
  const helpers = framework === "sinatra" ? jsonBodyHelpers(text) : new Set<string>();
  const closeHandler = (handler: NonNullable<Scope["handler"]>, end: number): void => {
    const block = lines.slice(handler.from + 1, end).join("\n");
    for (const route of handler.routes) {
      const inputs = rubyHandlerInputs(route.method, block, pathParameterNames(route.path), helpers);
      routes.push(textRoute(route.method, route.path, file, route.line, framework, inputs));
    }
  };
  lines.forEach((raw, index) => {
    const line = raw.trim();
    const scope = stack[stack.length - 1] as Scope;
    const opens = /\bdo(?:\s*\|[^|]*\|)?$/.test(line);
    const add = (method: string, path: string, action?: string, controller = scope.controller): void => {
      const route = textRoute(method, rubyTemplate(path), file, index + 1, framework);
      if (action && controller) railsTargets.set(route, { controller, action });
      routes.push(route);
    };
    // `end`, `end.to_json`, `end)`: a block closes.
    if (/^end(?![\w?!])/.test(line)) {
      const handler = stack.length > 1 ? stack.pop()?.handler : undefined;
      if (handler) closeHandler(handler, index);
      return;
    }
    const verb = VERB.exec(line);
    if (verb) {
      const rest = verb[5] ?? "";
      const path = verb[3] ?? verb[4];
      const methods = verb[1] === "match" ? viaMethods(rest) : [(verb[1] ?? "").toUpperCase()];
      const served =
        path === undefined
          ? []
          : methods.map((method) => ({
              method,
              path: rubyTemplate(joinPaths(scope.prefix, path)),
              line: index + 1,
            }));
      // A Sinatra handler's routes wait for its block's end, where what the block reads is known.
      if (framework === "sinatra" && opens) {
        stack.push({ prefix: scope.prefix, handler: { routes: served, from: index } });
        return;
      }
      // `to: "pages#about"` names the controller and action; inside `resources`, the verb's own name is the action.
      const to = /(?:\bto:\s*|=>\s*)['"]([\w/]+)#(\w+)['"]/.exec(rest);
      const named = path === undefined ? undefined : /^\w+$/.exec(path.replace(/^\//, ""))?.[0];
      for (const route of served) {
        const action = to?.[2] ?? (scope.controller ? named : undefined);
        const controller = to ? `${scope.module ?? ""}${to[1]}` : scope.controller;
        add(route.method, route.path, action, controller);
      }
      if (opens) stack.push({ ...scope, handler: undefined });
      return;
    }
    if (/^root\b/.test(line)) {
      const to = /['"]([\w/]+)#(\w+)['"]/.exec(line);
      add("GET", scope.prefix || "/", to?.[2], to ? `${scope.module ?? ""}${to[1]}` : undefined);
      return;
    }
    const namespace = /^namespace\s+:?['"]?([\w/]+)['"]?/.exec(line);
    if (namespace && opens) {
      stack.push({
        prefix: joinPaths(scope.prefix, namespace[1] ?? ""),
        module: `${scope.module ?? ""}${namespace[1]}/`,
      });
      return;
    }
    const scoped = /^scope\s*\(?\s*(?:path:\s*)?(['"])(.*?)\1/.exec(line);
    if (scoped && opens) {
      const module = /\bmodule:\s*:?['"]?([\w/]+)/.exec(line)?.[1];
      stack.push({
        prefix: joinPaths(scope.prefix, (scoped[2] ?? "").replace(/\([^)]*\)/g, "")),
        module: module ? `${scope.module ?? ""}${module}/` : scope.module,
      });
      return;
    }
    const resources = /^(resources|resource)\s+:(\w+)(.*)$/.exec(line);
    if (resources) {
      const plural = resources[1] === "resources";
      const name = resources[2] ?? "";
      const options = resources[3] ?? "";
      const custom = /\bpath:\s*['"]([^'"]*)['"]/.exec(options)?.[1];
      const collection = joinPaths(scope.prefix, custom ?? name);
      const member = plural ? `${collection}/{id}` : collection;
      const allowed = allowedActions(options);
      // `resource :profile` is served by ProfilesController, as `resources :profiles` is.
      const named = /\bcontroller:\s*:?['"]?([\w/]+)/.exec(options)?.[1] ?? (plural ? name : `${name}s`);
      const controller = `${scope.module ?? ""}${named}`;
      for (const [action, method, suffix, onMember] of ACTIONS) {
        if (!allowed(action) || (!plural && action === "index")) continue;
        add(method, `${onMember ? member : collection}${suffix}`, action, controller);
      }
      if (opens)
        stack.push({
          prefix: plural ? `${collection}/{${singular(name)}_id}` : collection,
          member,
          collection,
          module: scope.module,
          controller,
        });
      return;
    }
    if (/^member\s+do$/.test(line)) {
      stack.push({ ...scope, prefix: scope.member ?? scope.prefix, handler: undefined });
      return;
    }
    if (/^collection\s+do$/.test(line)) {
      stack.push({ ...scope, prefix: scope.collection ?? scope.prefix, handler: undefined });
      return;
    }
    // Any other block (`constraints … do`, `if`, `concern`) nests without a prefix; `end` pops it.
    // One-line forms close where they open: `def x; 1; end`, an endless `def h(t) = …`.
    const closed = /[;\s]end$/.test(line) || /^def\s+[\w.?!]+(?:\([^)]*\))?\s*=[^=~]/.test(line);
    if (
      opens ||
      (!closed &&
        (/^(?:if|unless|case|while|until|def|class|module|begin)\b/.test(line) ||
          /(?:=|\|\|=)\s*(?:if|unless|case|begin)\b/.test(line)))
    )
      stack.push({ ...scope, member: undefined, collection: undefined, handler: undefined });
  });
  // A handler whose `end` was never read (the file ends inside it) still serves its routes.
  for (const scope of stack.reverse()) if (scope.handler) closeHandler(scope.handler, lines.length);
  return routes;
}

function viaMethods(options: string): string[] {
  const via = /\bvia:\s*(\[[^\]]*\]|:\w+)/.exec(options)?.[1];
  if (!via || /:all\b/.test(via)) return ["ALL"];
  return [...via.matchAll(/:(\w+)/g)].map((match) => (match[1] ?? "").toUpperCase());
}

function allowedActions(options: string): (action: string) => boolean {
  const only = /\bonly:\s*(\[[^\]]*\]|:\w+|%i\[[^\]]*\])/.exec(options)?.[1];
  const except = /\bexcept:\s*(\[[^\]]*\]|:\w+|%i\[[^\]]*\])/.exec(options)?.[1];
  const names = (list: string): Set<string> =>
    new Set(
      list.startsWith("%i")
        ? list.slice(3, -1).split(/\s+/)
        : [...list.matchAll(/:(\w+)/g)].map((m) => m[1] ?? ""),
    );
  if (only) {
    const kept = names(only);
    return (action) => kept.has(action);
  }
  if (except) {
    const dropped = names(except);
    return (action) => !dropped.has(action);
  }
  return () => true;
}

function singular(word: string): string {
  if (word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (/(?:ss|us)$/.test(word)) return word;
  return word.endsWith("s") ? word.slice(0, -1) : word;
}

function rubyTemplate(path: string): string {
  return normalizePathTemplate(
    path.replace(/\(\.:format\)$/, "").replace(/\*([A-Za-z_]\w*)/g, "{$1}"),
    "colon",
  );
}
