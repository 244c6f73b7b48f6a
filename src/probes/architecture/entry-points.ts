import path from "node:path";
import picomatch from "picomatch";
import type { TargetProfile } from "../../targets/profile-schema.ts";
import { readText } from "./code-files.ts";
import type { ImportGraph } from "./import-graph.ts";
import { conditionalTarget } from "./javascript-resolver.ts";
import { PythonResolver } from "./python-imports.ts";

// Where execution starts: what package.json runs (main, bin, exports, scripts such as `node x.js` or
// `tsx src/y.ts`), what any Dockerfile/Procfile/Makefile/config/HTML page names, the profile's
// `entry_points`, and framework conventions (server/app/index/main at the root or in src/, Next.js-style
// page folders, Python `__main__`, manage.py, wsgi/asgi, `if __name__ == "__main__"`, Django and Celery
// modules loaded by name). Tests and tool configuration are entries too: they run, and reach code.

export interface EntryPoint {
  file: string;
  reason: string;
}

/** Folders of code run by hand or served as-is: their modules are entries and never dead. */
export const CONVENTION_FOLDERS = new Set([
  "scripts",
  "script",
  "bin",
  "tools",
  "migrations",
  "alembic",
  "seeds",
  "fixtures",
  "examples",
  "example",
  "docs",
  "public",
  "static",
  "assets",
  "www",
  "benchmarks",
  "bench",
]);

const JS_ENTRY_NAME = /^(index|main|server|app|cli)\.[cm]?[jt]sx?$/;
const PYTHON_ENTRY_NAME =
  /^(__main__|manage|wsgi|asgi|app|main|server|run|conftest|setup|celery|gunicorn\.conf)\.py$/;
const DJANGO_MODULE = /^(settings.*|urls|admin|apps|models|signals|tasks|receivers)\.py$/;
const DJANGO_FOLDER = /(^|\/)(management\/commands|templatetags|migrations)\//;
const FILE_ROUTING_PACKAGES = [
  "next",
  "nuxt",
  "@sveltejs/kit",
  "astro",
  "@remix-run/react",
  "@remix-run/node",
];
const FILE_ROUTING_FOLDERS = [
  "pages",
  "app",
  "src/pages",
  "src/app",
  "src/routes",
  "app/routes",
  "server",
  "src/middleware",
];
const AUTO_IMPORT_FOLDERS = [
  "components",
  "composables",
  "plugins",
  "layouts",
  "middleware",
  "utils",
  "stores",
];
/** Text files that never name code to run. */
const SILENT_TEXT =
  /(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|npm-shrinkwrap\.json)$|\.(md|txt|css|sql)$/i;
const PATH_TOKEN = /[\w@.$/-]*[\w$-]\.(?:[cm]?[jt]sx?|py)\b/g;
const HANDLER_FILE = /\.(ya?ml|json|toml)$/i;
const HANDLER_TOKEN = /([\w@./-]*[\w-])\.[A-Za-z_$][\w$]*\b/g;
const MODULE_TOKEN = /(?:-m\s+|\b)([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::[A-Za-z_]\w*|\s|$)/g;

function folderOf(file: string): string {
  return path.posix.dirname(file) === "." ? "" : path.posix.dirname(file);
}

export function inConventionFolder(file: string): boolean {
  return file
    .split("/")
    .slice(0, -1)
    .some((part) => CONVENTION_FOLDERS.has(part.toLowerCase()));
}

export function findEntryPoints(graph: ImportGraph, profile: TargetProfile | undefined): EntryPoint[] {
  const files = new Set(graph.modules.map((module) => module.file));
  const entries = new Map<string, string>();
  const add = (file: string | undefined, reason: string): void => {
    if (file !== undefined && files.has(file) && !entries.has(file)) entries.set(file, reason);
  };
  const resolveWithoutExtension = (candidate: string, base: string): string | undefined => {
    for (const start of [base, ""]) {
      const stem = path.posix.normalize(path.posix.join(start, candidate.replace(/^\.?\//, "")));
      for (const extension of [".ts", ".js", ".mjs", ".cjs", ".mts", ".cts", ".tsx", ".jsx"]) {
        if (files.has(stem + extension)) return stem + extension;
      }
    }
    return undefined;
  };
  const resolvePath = (candidate: string, base: string): string | undefined => {
    const cleaned = candidate.replace(/^\.\//, "");
    for (const start of [base, ""]) {
      const joined = path.posix.normalize(path.posix.join(start, cleaned.replace(/^\//, "")));
      if (files.has(joined)) return joined;
      const stem = joined.replace(/\.[cm]?js$/, "");
      for (const extension of [".ts", ".tsx", ".mts", ".cts"])
        if (files.has(stem + extension)) return stem + extension;
    }
    return undefined;
  };

  for (const pattern of profile?.entry_points ?? []) {
    const cleaned = pattern.replace(/^\.\//, "").replace(/\/+$/, "");
    const matcher = picomatch(cleaned, { dot: true });
    for (const file of files) {
      if (file === cleaned || file.startsWith(`${cleaned}/`) || matcher(file))
        add(file, "profile entry_points");
    }
  }

  // The commands the profile starts, seeds and tests the target with run their files (`node -r ./preload.js`).
  const environment = profile?.environment;
  for (const command of [environment?.start, environment?.seed, environment?.reset, profile?.tests]) {
    for (const token of command?.command.match(PATH_TOKEN) ?? [])
      add(resolvePath(token, ""), "named in the profile's commands");
  }

  const frameworkFolders: string[] = [];
  for (const manifestFile of graph.textFiles.filter((file) => /(^|\/)package\.json$/.test(file))) {
    const base = folderOf(manifestFile);
    let manifest: Record<string, unknown>;
    try {
      manifest = JSON.parse(readText(graph.root, manifestFile) ?? "{}") as Record<string, unknown>;
    } catch {
      continue;
    }
    for (const field of ["main", "module", "browser"]) {
      const value = manifest[field];
      if (typeof value === "string") add(resolvePath(value, base), `package.json ${field}`);
    }
    const bin = manifest.bin;
    for (const value of typeof bin === "string"
      ? [bin]
      : bin && typeof bin === "object"
        ? Object.values(bin)
        : []) {
      if (typeof value === "string") add(resolvePath(value, base), "package.json bin");
    }
    for (const target of exportTargets(manifest.exports))
      add(resolvePath(target, base), "package.json exports");
    const scripts =
      manifest.scripts && typeof manifest.scripts === "object" ? Object.values(manifest.scripts) : [];
    for (const script of scripts) {
      if (typeof script !== "string") continue;
      for (const token of script.match(PATH_TOKEN) ?? [])
        add(resolvePath(token, base), "package.json script");
    }
    const dependencies = ["dependencies", "devDependencies", "peerDependencies"].flatMap((field) => {
      const value = manifest[field];
      return value && typeof value === "object" ? Object.keys(value) : [];
    });
    if (dependencies.some((name) => FILE_ROUTING_PACKAGES.includes(name))) {
      frameworkFolders.push(...FILE_ROUTING_FOLDERS.map((folder) => path.posix.join(base, folder)));
      if (dependencies.includes("nuxt")) {
        frameworkFolders.push(...AUTO_IMPORT_FOLDERS.map((folder) => path.posix.join(base, folder)));
      }
      for (const name of ["middleware", "instrumentation"]) {
        for (const start of [base, path.posix.join(base, "src")])
          add(resolvePath(path.posix.join(start, name), ""), "framework convention");
      }
    }
  }

  const python = new PythonResolver(
    new Set(graph.modules.filter((module) => module.language === "python").map((module) => module.file)),
  );
  for (const textFile of graph.textFiles) {
    if (SILENT_TEXT.test(textFile)) continue;
    const text = readText(graph.root, textFile);
    if (text === undefined) continue;
    const base = folderOf(textFile);
    for (const token of text.match(PATH_TOKEN) ?? []) add(resolvePath(token, base), `named in ${textFile}`);
    if (HANDLER_FILE.test(textFile)) {
      // `handler: src/functions/create.main` (serverless and similar manifests): a file and its export.
      for (const match of text.matchAll(HANDLER_TOKEN)) {
        add(resolveWithoutExtension(match[1]!, base), `named in ${textFile}`);
      }
    }
    if (python.hasModules()) {
      for (const match of text.matchAll(MODULE_TOKEN)) {
        const dotted = match[1]!;
        if (!dotted.includes(".") && !match[0].includes(":") && !match[0].startsWith("-m")) continue;
        add(python.moduleByName(dotted), `named in ${textFile}`);
      }
    }
  }

  const isDjango = [...files].some((file) => path.posix.basename(file) === "manage.py");
  for (const module of graph.modules) {
    const name = path.posix.basename(module.file);
    const depth = module.file.split("/").length;
    if (module.test) add(module.file, "test");
    else if (module.config) add(module.file, "tool configuration");
    else if (module.main) add(module.file, "runs as a program");
    else if (inConventionFolder(module.file)) add(module.file, "script/served folder");
    else if (module.language === "javascript" && JS_ENTRY_NAME.test(name) && isTopLevel(module.file, graph)) {
      add(module.file, "conventional entry file");
    } else if (module.language === "python" && PYTHON_ENTRY_NAME.test(name) && depth <= 3) {
      add(module.file, "conventional Python entry");
    } else if (isDjango && (DJANGO_MODULE.test(name) || DJANGO_FOLDER.test(module.file))) {
      add(module.file, "Django convention");
    } else if (frameworkFolders.some((folder) => module.file.startsWith(`${folder}/`))) {
      add(module.file, "file-based routing");
    }
  }
  return [...entries]
    .map(([file, reason]) => ({ file, reason }))
    .sort((left, right) => left.file.localeCompare(right.file));
}

/** At the root, in `src/`, or at the root of a package of the repository. */
function isTopLevel(file: string, graph: ImportGraph): boolean {
  const folder = folderOf(file);
  if (folder === "" || folder === "src") return true;
  const packageFolders = graph.textFiles.filter((text) => /(^|\/)package\.json$/.test(text)).map(folderOf);
  return packageFolders.some((base) => base !== "" && (folder === base || folder === `${base}/src`));
}

function exportTargets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(exportTargets);
  if (value && typeof value === "object") {
    const direct = conditionalTarget(value);
    return [...(direct ? [direct] : []), ...Object.values(value).flatMap(exportTargets)];
  }
  return [];
}
