import path from "node:path";
import type { Route } from "../../map/system-map.ts";
import type { ContainerGraph } from "./container-graph.ts";
import {
  type ChildReference,
  extractJavaScriptFacts,
  type JavaScriptFileFacts,
} from "./javascript-file-facts.ts";
import { resolveInputs } from "./javascript-input-resolution.ts";
import type { InputsDraft } from "./javascript-route-inputs.ts";
import { isNextRouteFile, nextProjectDetector, nextRoutesOf } from "./nextjs-routes.ts";
import { joinPaths } from "./path-template.ts";
import { type BodyEncoding, CONTENT_TYPES, type RouteInputs } from "./route-inputs.ts";
import { readSource } from "./source-tree.ts";

// Reads every JavaScript/TypeScript file once and links them: a router exported by one file and mounted
// by another gets the mount's prefix.

export interface JavaScriptScan {
  graph: ContainerGraph;
  /** File-based routes (Next.js) that need no prefix resolution. */
  fileRoutes: Route[];
  channels: Array<{ path: string; file: string; line: number; framework: string }>;
  notes: string[];
  /** How a body arrives when its handler does not say, by framework (see `withBodyEncoding`). */
  bodyEncoding: (framework: string | undefined) => BodyEncoding | undefined;
}

const EXTENSIONS = [".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];

export function scanJavaScriptRoutes(root: string, files: string[]): JavaScriptScan {
  const known = new Set(files);
  const isNextProject = nextProjectDetector();
  const factsByFile = new Map<string, JavaScriptFileFacts>();
  const scan: JavaScriptScan = {
    graph: { containers: [], mounts: [], routes: [] },
    fileRoutes: [],
    channels: [],
    notes: [],
    bodyEncoding: () => undefined,
  };
  const unparsed: string[] = [];
  for (const file of files) {
    const text = readSource(root, file);
    if (text === undefined) continue;
    try {
      factsByFile.set(file, extractJavaScriptFacts(file, text));
    } catch (error) {
      unparsed.push(`${file} (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  if (unparsed.length > 0)
    scan.notes.push(
      `${unparsed.length} JavaScript/TypeScript files not read: ${unparsed.slice(0, 3).join("; ")}`,
    );

  const keyOf = (file: string, child: ChildReference): string | undefined => {
    if ("local" in child) return `${file}#${child.local}`;
    const target = resolveSpecifier(file, child.specifier, known);
    if (target === undefined) return undefined;
    const exported = factsByFile.get(target)?.exports.get(child.exportName) ?? child.exportName;
    return `${target}#${exported}`;
  };

  const declaredContainers = new Set(
    [...factsByFile].flatMap(([file, facts]) =>
      [...facts.containers.keys()].map((name) => `${file}#${name}`),
    ),
  );
  // A bootstrap file's global prefix applies to every decorated controller (one application per tree).
  const globalPrefix = [...factsByFile.values()].flatMap((facts) => facts.globalPrefixes)[0];
  const versioning = [...factsByFile.values()].find((facts) => facts.versioning)?.versioning;
  const modelOf = (from: string, specifier: string) => {
    const target = resolveSpecifier(from, specifier, known);
    return target === undefined ? undefined : factsByFile.get(target)?.model;
  };
  scan.bodyEncoding = treeBodyEncoding(factsByFile.values());
  const resolve = (draft: InputsDraft) => safeInputs(draft, modelOf, "a Next.js route", scan.notes) ?? {};
  for (const [file, facts] of factsByFile) {
    if (isNextRouteFile(file))
      scan.fileRoutes.push(...nextRoutesOf(root, facts.model, isNextProject, resolve));
  }
  for (const [file, facts] of factsByFile) {
    for (const [name, container] of facts.containers) {
      const isController = facts.controllers.includes(name);
      scan.graph.containers.push({
        key: `${file}#${name}`,
        framework: container.framework,
        prefix:
          globalPrefix && isController ? joinPaths(globalPrefix, container.prefix || "/") : container.prefix,
      });
    }
    const containerKey = (name: string): string => {
      const imported = facts.imports.get(name);
      return (imported && keyOf(file, imported)) ?? `${file}#${name}`;
    };
    for (const { onlyIfContainer, inputs: draft, versions, ...route } of facts.routes) {
      const container = containerKey(route.container);
      if (onlyIfContainer && !declaredContainers.has(container)) continue;
      const inputs = draft ? safeInputs(draft, modelOf, file, scan.notes) : undefined;
      const chosen = versioning ? (versions ?? versioning.defaultVersions) : [];
      const paths =
        chosen.length > 0
          ? chosen.map((version) => joinPaths(`/${versioning?.prefix}${version}`, route.path))
          : [route.path];
      for (const path of paths) scan.graph.routes.push({ ...route, path, container, file, inputs });
    }
    for (const mount of facts.mounts) {
      const child = keyOf(file, mount.child);
      if (child !== undefined)
        scan.graph.mounts.push({ parent: containerKey(mount.parent), child, prefix: mount.prefix });
    }
    for (const channel of facts.channels) scan.channels.push({ ...channel, file });
  }
  return scan;
}

/** `./routes/users` from `src/app.ts` → `src/routes/users.ts` (or .js, /index.ts…), when it is in the tree. */
export function resolveSpecifier(
  from: string,
  specifier: string,
  files: ReadonlySet<string>,
): string | undefined {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const withoutExtension = base.replace(/\.(m|c)?js$/, "");
  const candidates = [
    base,
    ...EXTENSIONS.map((extension) => withoutExtension + extension),
    ...EXTENSIONS.map((extension) => `${base}/index${extension}`),
  ];
  return candidates.find((candidate) => files.has(candidate));
}

/**
 * How a body arrives when the handler does not say: the one parser the app installs (`express.json()` only
 * means JSON, `urlencoded` only means a form), JSON for frameworks that parse it themselves, else unknown.
 */
function treeBodyEncoding(
  facts: Iterable<JavaScriptFileFacts>,
): (framework: string | undefined) => BodyEncoding | undefined {
  const parsers = new Set([...facts].flatMap((entry) => entry.bodyParsers));
  return (framework) => {
    if (parsers.size === 1) return [...parsers][0];
    if (parsers.size === 0 && (framework === "fastify" || framework === "nestjs")) return "json";
    return undefined;
  };
}

/** A route whose body's encoding is unknown, given the app's: `express.json()` alone means JSON. */
export function withBodyEncoding(route: Route, encoding: BodyEncoding | undefined): Route {
  if (!route.request_body || route.request_body.content_type || !encoding) return route;
  return { ...route, request_body: { ...route.request_body, content_type: CONTENT_TYPES[encoding] } };
}

/** A route's inputs, or none (and a note) when reading them failed: the route itself still stands. */
function safeInputs(
  draft: InputsDraft,
  modelOf: Parameters<typeof resolveInputs>[1],
  file: string,
  notes: string[],
): RouteInputs | undefined {
  try {
    return resolveInputs(draft, modelOf);
  } catch (error) {
    notes.push(
      `inputs of a route in ${file} not read: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  }
}
