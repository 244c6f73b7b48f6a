import fs from "node:fs";
import path from "node:path";

// One walk over a target's source tree for every probe that reads code: breadth first, folders and files
// in name order, a cap on files and on file size. Each probe says which folders to skip and which files
// to keep; the walk never follows what it was told to skip.

/**
 * Folders no probe reads: dependencies, build output, virtual environments, caches, and copies of other
 * people's libraries kept in the repository (their cycles, dead modules and routes are not the application's).
 */
const VENDORED_FOLDERS = new Set([
  "node_modules",
  "dist",
  "build",
  "out",
  "coverage",
  "htmlcov",
  "target",
  "venv",
  "env",
  "site-packages",
  "__pycache__",
  "vendor",
  "vendors",
  "_vendor",
  "third_party",
  "third-party",
  "bower_components",
]);

/** Dot folders (.git, .venv, .next, .github) hold tooling and build output, not the application. */
export function isVendoredFolder(name: string): boolean {
  return name.startsWith(".") || VENDORED_FOLDERS.has(name) || name.endsWith(".egg-info");
}

export interface WalkOptions {
  skipFolder(name: string): boolean;
  /** Keep this file? `relative` uses `/` separators. */
  keep(relative: string, name: string): boolean;
  maxFiles: number;
  maxFileBytes: number;
}

export interface Walked {
  /** Kept files relative to the root, in walk order. */
  files: string[];
  /** True when `maxFiles` cut the walk short. */
  truncated: boolean;
}

export function walkFiles(root: string, options: WalkOptions): Walked {
  const files: string[] = [];
  const pending = [""];
  while (pending.length > 0) {
    const folder = pending.shift() ?? "";
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(root, folder), { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((left, right) => left.name.localeCompare(right.name));
    for (const entry of entries) {
      const relative = folder === "" ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!options.skipFolder(entry.name)) pending.push(relative);
        continue;
      }
      if (!entry.isFile() || !options.keep(relative, entry.name)) continue;
      try {
        if (fs.statSync(path.join(root, relative)).size > options.maxFileBytes) continue;
      } catch {
        continue;
      }
      if (files.length >= options.maxFiles) return { files, truncated: true };
      files.push(relative);
    }
  }
  return { files, truncated: false };
}

/** A file of the tree as text, or undefined when it cannot be read. */
export function readTreeFile(root: string, relative: string): string | undefined {
  try {
    return fs.readFileSync(path.join(root, relative), "utf8");
  } catch {
    return undefined;
  }
}
