import fs from "node:fs";
import path from "node:path";
import type { Route } from "../../map/system-map.ts";
import { resolveContainerGraph } from "./container-graph.ts";
import { scanDotnetRoutes } from "./dotnet-routes.ts";
import { scanGoRoutes } from "./go-routes.ts";
import { scanJavaRoutes } from "./java-routes.ts";
import { SERVER_PACKAGES } from "./javascript-bindings.ts";
import { type JavaScriptScan, scanJavaScriptRoutes, withBodyEncoding } from "./javascript-routes.ts";
import { scanPhpRoutes } from "./php-routes.ts";
import { type PythonScan, scanPythonRoutes, startPythonRoutes } from "./python-routes.ts";
import { scanRubyRoutes } from "./ruby-routes.ts";
import { listSourceFiles, type SourceTree, type SourceTreeOptions } from "./source-tree.ts";

// Routes and WebSocket endpoints a target declares in its source, from syntax trees of JavaScript,
// TypeScript and Python files, and from line-based readers of Java/Kotlin (Spring), Go, PHP and
// Ruby (Rails, Sinatra) and C# (ASP.NET Core).

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
  files: {
    javascript: number;
    python: number;
    java: number;
    go: number;
    php: number;
    ruby: number;
    dotnet: number;
  };
  notes: string[];
}

export type SourceRouteOptions = SourceTreeOptions;

const JAVASCRIPT = new Set([".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"]);
const PYTHON = new Set([".py"]);
const JAVA = new Set([".java", ".kt"]);
const GO = new Set([".go"]);
const PHP = new Set([".php"]);
const RUBY = new Set([".rb"]);
const DOTNET = new Set([".cs"]);

export function scanSourceRoutes(root: string, options: SourceRouteOptions = {}): SourceScan {
  const trees = sourceTrees(root, options);
  const javascript = scanJavaScriptRoutes(root, trees.javascript.files);
  const python = scanPythonRoutes(root, trees.python.files);
  return combine(root, trees, javascript, python);
}

/**
 * The same scan with Python read in a child process while JavaScript is read here: on a tree of both
 * languages it takes as long as the slower half, not the sum.
 */
export async function scanSourceRoutesAsync(
  root: string,
  options: SourceRouteOptions = {},
): Promise<SourceScan> {
  const trees = sourceTrees(root, options);
  const python = startPythonRoutes(root, trees.python.files);
  const javascript = scanJavaScriptRoutes(root, trees.javascript.files);
  return combine(root, trees, javascript, await python());
}

interface SourceTrees {
  javascript: SourceTree;
  python: SourceTree;
  java: SourceTree;
  go: SourceTree;
  php: SourceTree;
  ruby: SourceTree;
  dotnet: SourceTree;
}

function sourceTrees(root: string, options: SourceRouteOptions): SourceTrees {
  return {
    javascript: listSourceFiles(root, JAVASCRIPT, { skipBrowserAssets: true, ...options }),
    python: listSourceFiles(root, PYTHON, { skipBrowserAssets: true, ...options }),
    java: listSourceFiles(root, JAVA, { skipBrowserAssets: true, ...options }),
    go: listSourceFiles(root, GO, { skipBrowserAssets: true, ...options }),
    // A plain PHP application serves its pages from `public/` or `www/`: that folder is the application.
    php: listSourceFiles(root, PHP, options),
    ruby: listSourceFiles(root, RUBY, { skipBrowserAssets: true, ...options }),
    dotnet: listSourceFiles(root, DOTNET, { skipBrowserAssets: true, ...options }),
  };
}

function combine(
  root: string,
  trees: SourceTrees,
  javascript: JavaScriptScan,
  python: PythonScan,
): SourceScan {
  const notes: string[] = [];
  for (const [language, tree] of [
    ["JavaScript/TypeScript", trees.javascript],
    ["Python", trees.python],
    ["Java/Kotlin", trees.java],
    ["Go", trees.go],
    ["PHP", trees.php],
    ["Ruby", trees.ruby],
    ["C#", trees.dotnet],
  ] as const) {
    if (tree.truncated)
      notes.push(`${language} files capped at ${tree.files.length}: some routes may be missing`);
  }
  notes.push(...javascript.notes, ...python.notes);
  const routes = [
    ...resolveContainerGraph(javascript.graph, packageFramework(root) ?? "javascript").map((route) =>
      withBodyEncoding(route, javascript.bodyEncoding(route.framework)),
    ),
    ...javascript.fileRoutes,
    ...resolveContainerGraph(python.graph, python.frameworks[0] ?? "python"),
    ...scanJavaRoutes(root, trees.java.files),
    ...scanGoRoutes(root, trees.go.files),
    ...scanPhpRoutes(root, trees.php.files),
    ...scanRubyRoutes(root, trees.ruby.files),
    ...scanDotnetRoutes(root, trees.dotnet.files),
  ].sort((left, right) => left.file.localeCompare(right.file) || (left.line ?? 0) - (right.line ?? 0));
  const channels = dedupeChannels([...javascript.channels, ...python.channels]);
  return {
    routes,
    channels,
    files: {
      javascript: trees.javascript.files.length,
      python: trees.python.files.length,
      java: trees.java.files.length,
      go: trees.go.files.length,
      php: trees.php.files.length,
      ruby: trees.ruby.files.length,
      dotnet: trees.dotnet.files.length,
    },
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
