import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** Writes a fixture tree (relative path → content) into a fresh temp folder and answers its path. */
export function writeTree(files: Record<string, string>, prefix = "qaas-map-"): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(root, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  return root;
}

/** `METHOD path` strings of routes, sorted, for whole-list assertions. */
export function signatures(routes: Array<{ method: string; path: string }>): string[] {
  return [...new Set(routes.map((route) => `${route.method} ${route.path}`))].sort();
}
