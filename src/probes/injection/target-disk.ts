import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ProbeRun } from "../session/probe-run.ts";

// The target's own disk, for probes that prove a write by finding the file it made: only where the target
// runs on this machine from its source tree. Searches are bounded (depth, entries) and skip tool and VCS
// folders; removal touches only files whose names carry a probe's unique token.

const SKIP_FOLDERS = new Set(["node_modules", ".git", ".venv", "venv", "__pycache__", ".cache"]);
const SEARCH_DEPTH = 6;
const SEARCH_ENTRIES = 20_000;

/** The folders a written name may land under: the target's tree, then the machine's temporary folder. */
export function searchRoots(run: ProbeRun): string[] {
  const root = run.context.target?.root;
  if (!root || !fs.existsSync(root)) return [];
  return [root, os.tmpdir()];
}

/** `app/uploads/x.txt` under the target's tree, or the absolute path elsewhere. */
export function shown(roots: readonly string[], file: string): string {
  const relative = path.relative(roots[0]!, file);
  return relative.startsWith("..") ? file : relative.split(path.sep).join("/");
}

export function findFile(roots: readonly string[], name: string): string | undefined {
  for (const root of roots) {
    const found = walk(root, (file) => path.basename(file) === name);
    if (found.length > 0) return found[0];
  }
  return undefined;
}

/**
 * Every file the probe wrote, wherever the application put it (a name it kept whole, or one it mangled):
 * only names carrying the probe's unique tokens, under the search roots and beside the target's tree.
 */
export function removeAll(roots: readonly string[], names: readonly string[]): void {
  const tokens = names.map((name) => name.replace(/\.[a-z0-9]+$/i, ""));
  const ours = (file: string) => tokens.some((token) => path.basename(file).includes(token));
  const places: Array<[string, number]> = [
    ...roots.map((root): [string, number] => [root, SEARCH_DEPTH]),
    [path.dirname(roots[0]!), 1],
  ];
  for (const [place, depth] of places)
    for (const file of walk(place, ours, depth)) fs.rmSync(file, { force: true });
}

/** Files under `root` (bounded depth and count, tool and VCS folders skipped) that `match`. */
function walk(root: string, match: (file: string) => boolean, depth = SEARCH_DEPTH): string[] {
  const found: string[] = [];
  let seen = 0;
  const visit = (folder: string, level: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      seen += 1;
      if (seen > SEARCH_ENTRIES) return;
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (level < depth && !SKIP_FOLDERS.has(entry.name)) visit(full, level + 1);
      } else if (match(full)) found.push(full);
    }
  };
  visit(root, 1);
  return found;
}
