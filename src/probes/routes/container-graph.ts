import type { Route } from "../../map/system-map.ts";
import { joinPaths } from "./path-template.ts";
import type { RouteInputs } from "./route-inputs.ts";

// Routes hang off containers (an app, a router, a blueprint, a plugin function); containers are mounted
// on each other with prefixes, possibly across files. Each language extractor reduces a tree to these
// facts; this file turns them into full paths, whatever the language.

/** A container, keyed `<file>#<local name>`. */
export interface ContainerFact {
  key: string;
  framework?: string;
  /** The container's own prefix (Koa `new Router({ prefix })`, a blueprint's `url_prefix`). */
  prefix: string;
}

export interface MountFact {
  parent: string;
  child: string;
  prefix: string;
  /** Flask's `register_blueprint(bp, url_prefix=…)` replaces the blueprint's own prefix. */
  replacesChildPrefix?: boolean;
}

export interface RouteFact {
  container: string;
  method: string;
  /** A normalised `{param}` template relative to its container. */
  path: string;
  file: string;
  line: number;
  /** What the file itself says (its imports), used when the container says nothing. */
  framework?: string;
  /** The query, header and cookie parameters and the body the handler reads. */
  inputs?: RouteInputs;
}

export interface ContainerGraph {
  containers: ContainerFact[];
  mounts: MountFact[];
  routes: RouteFact[];
}

const MAX_DEPTH = 12;
const MAX_PREFIXES = 20;

export function resolveContainerGraph(graph: ContainerGraph, fallbackFramework: string): Route[] {
  const containers = new Map(graph.containers.map((container) => [container.key, container]));
  const parentsOf = new Map<string, MountFact[]>();
  for (const mount of graph.mounts) {
    if (mount.parent === mount.child) continue;
    const list = parentsOf.get(mount.child) ?? [];
    list.push(mount);
    parentsOf.set(mount.child, list);
  }

  const prefixCache = new Map<string, string[]>();
  const prefixesOf = (key: string, visiting: Set<string>): string[] => {
    const cached = prefixCache.get(key);
    if (cached) return cached;
    const own = containers.get(key)?.prefix ?? "";
    const mounts = (parentsOf.get(key) ?? []).filter((mount) => !visiting.has(mount.parent));
    if (mounts.length === 0 || visiting.size >= MAX_DEPTH) return [own];
    const next = new Set(visiting).add(key);
    const result = new Set<string>();
    for (const mount of mounts) {
      for (const parentPrefix of prefixesOf(mount.parent, next)) {
        const mounted = joinPrefix(parentPrefix, mount.prefix);
        result.add(mount.replacesChildPrefix ? mounted : joinPrefix(mounted, own));
        if (result.size >= MAX_PREFIXES) break;
      }
    }
    const prefixes = [...result];
    if (visiting.size === 0) prefixCache.set(key, prefixes);
    return prefixes;
  };

  const frameworkOf = (key: string, visiting: Set<string>): string | undefined => {
    const own = containers.get(key)?.framework;
    if (own || visiting.size >= MAX_DEPTH) return own;
    const next = new Set(visiting).add(key);
    for (const mount of parentsOf.get(key) ?? []) {
      if (next.has(mount.parent)) continue;
      const inherited = frameworkOf(mount.parent, next);
      if (inherited) return inherited;
    }
    return undefined;
  };

  const routes: Route[] = [];
  const seen = new Set<string>();
  for (const route of graph.routes) {
    const framework =
      containers.get(route.container)?.framework ??
      route.framework ??
      frameworkOf(route.container, new Set()) ??
      fallbackFramework;
    for (const prefix of prefixesOf(route.container, new Set())) {
      const full = joinPaths(prefix, route.path);
      const identity = `${route.method} ${full} ${route.file}:${route.line}`;
      if (seen.has(identity)) continue;
      seen.add(identity);
      routes.push({
        method: route.method,
        path: full,
        file: route.file,
        line: route.line,
        framework,
        ...withInputs(route.method, route.inputs),
      });
    }
  }
  return routes;
}

function joinPrefix(left: string, right: string): string {
  if (right === "" || right === "/") return left;
  return joinPaths(left, right);
}

/** A route's inputs as the map carries them: nothing empty, and no body on a method that cannot send one. */
export function withInputs(method: string, inputs: RouteInputs | undefined): RouteInputs {
  const result: RouteInputs = {};
  if (inputs?.parameters?.length) result.parameters = inputs.parameters;
  if (inputs?.request_body && !["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase()))
    result.request_body = inputs.request_body;
  return result;
}
