import path from "node:path";
import type { Route } from "../../map/system-map.ts";
import type { ContainerGraph } from "./container-graph.ts";
import {
  type ChildReference,
  extractJavaScriptFacts,
  type JavaScriptFileFacts,
} from "./javascript-file-facts.ts";
import { isNextRouteFile, nextProjectDetector, nextRoutesOf } from "./nextjs-routes.ts";
import { joinPaths } from "./path-template.ts";
import { readSource } from "./source-tree.ts";

// Reads every JavaScript/TypeScript file once and links them: a router exported by one file and mounted
// by another gets the mount's prefix.

export interface JavaScriptScan {
  graph: ContainerGraph;
  /** File-based routes (Next.js) that need no prefix resolution. */
  fileRoutes: Route[];
  channels: Array<{ path: string; file: string; line: number; framework: string }>;
  notes: string[];
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
  };
  const unparsed: string[] = [];
  for (const file of files) {
    const text = readSource(root, file);
    if (text === undefined) continue;
    try {
      factsByFile.set(file, extractJavaScriptFacts(file, text));
      if (isNextRouteFile(file)) scan.fileRoutes.push(...nextRoutesOf(root, file, text, isNextProject));
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
    for (const { onlyIfContainer, ...route } of facts.routes) {
      const container = containerKey(route.container);
      if (onlyIfContainer && !declaredContainers.has(container)) continue;
      scan.graph.routes.push({ ...route, container, file });
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
