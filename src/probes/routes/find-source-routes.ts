import fs from "node:fs";
import path from "node:path";
import type { Route } from "../../map/system-map.ts";
import { resolveContainerGraph } from "./container-graph.ts";
import { SERVER_PACKAGES } from "./javascript-bindings.ts";
import { scanJavaScriptRoutes } from "./javascript-routes.ts";
import { scanPythonRoutes } from "./python-routes.ts";
import { listSourceFiles, type SourceTreeOptions } from "./source-tree.ts";

// Routes and WebSocket endpoints a target declares in its source, from syntax trees of JavaScript,
// TypeScript and Python files.

export interface SourceChannel {
  path: string;
  file: string;
  line: number;
  framework: string;
}

export interface SourceScan {
  routes: Route[];
  channels: SourceChannel[];
  /** Files read, by language. */
  files: { javascript: number; python: number };
  notes: string[];
}

export type SourceRouteOptions = SourceTreeOptions;

const JAVASCRIPT = new Set([".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"]);
const PYTHON = new Set([".py"]);

export function scanSourceRoutes(root: string, options: SourceRouteOptions = {}): SourceScan {
  const notes: string[] = [];
  const javascriptTree = listSourceFiles(root, JAVASCRIPT, { skipBrowserAssets: true, ...options });
  const pythonTree = listSourceFiles(root, PYTHON, { skipBrowserAssets: true, ...options });
  for (const [language, tree] of [
    ["JavaScript/TypeScript", javascriptTree],
    ["Python", pythonTree],
  ] as const) {
    if (tree.truncated)
      notes.push(`${language} files capped at ${tree.files.length}: some routes may be missing`);
  }

  const javascript = scanJavaScriptRoutes(root, javascriptTree.files);
  const python = scanPythonRoutes(root, pythonTree.files);
  notes.push(...javascript.notes, ...python.notes);

  const routes = [
    ...resolveContainerGraph(javascript.graph, packageFramework(root) ?? "javascript"),
    ...javascript.fileRoutes,
    ...resolveContainerGraph(python.graph, python.frameworks[0] ?? "python"),
  ].sort((left, right) => left.file.localeCompare(right.file) || (left.line ?? 0) - (right.line ?? 0));

  const channels = dedupeChannels([...javascript.channels, ...python.channels]);
  return {
    routes,
    channels,
    files: { javascript: javascriptTree.files.length, python: pythonTree.files.length },
    notes,
  };
}

/** Every route the source declares: method (upper-case, `ALL` for any), `{param}` path, file, line, framework. */
export function findSourceRoutes(root: string, options: SourceRouteOptions = {}): Route[] {
  return scanSourceRoutes(root, options).routes;
}

/** WebSocket endpoints the source declares (best effort). */
export function findWebSocketPaths(root: string, options: SourceRouteOptions = {}): SourceChannel[] {
  return scanSourceRoutes(root, options).channels;
}

/** The server framework the root package.json depends on, for routes whose file does not say. */
function packageFramework(root: string): string | undefined {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as Record<
      string,
      unknown
    >;
    const names = ["dependencies", "devDependencies"].flatMap((field) => {
      const dependencies = manifest[field];
      return typeof dependencies === "object" && dependencies !== null ? Object.keys(dependencies) : [];
    });
    for (const name of names) {
      const framework = SERVER_PACKAGES[name];
      if (framework) return framework;
    }
  } catch {
    // No package.json: nothing to say.
  }
  return undefined;
}

function dedupeChannels(channels: SourceChannel[]): SourceChannel[] {
  const seen = new Set<string>();
  return channels.filter((channel) => {
    const key = `${channel.path} ${channel.file}:${channel.line}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
