import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { SystemMap } from "../../map/system-map.ts";
import { codeownersOf, readCodeowners } from "./codeowners.ts";

// Who owns which part of the target, so a finding can be routed to a person: CODEOWNERS when the target
// has one, else whoever committed most often, recently, to each top-level folder.

export type OwnershipEntry = SystemMap["ownership"][number];

export interface OwnershipOptions {
  /** Absolute paths never to read (the golden ledger). */
  exclude?: string[];
  /** Files considered when resolving CODEOWNERS (default 20 000). */
  maxFiles?: number;
  /** Recent commits considered (default 500). */
  maxCommits?: number;
  /** Entries at most (default 2 000): beyond that the rules are too fine-grained to list per path. */
  maxEntries?: number;
}

export interface OwnershipResult {
  entries: OwnershipEntry[];
  /** `codeowners` (with the file), `git`, or `none`. */
  source: { kind: "codeowners"; file: string } | { kind: "git" } | { kind: "none" };
  notes: string[];
}

const HEAVY_FOLDERS = new Set([
  "node_modules",
  "dist",
  "build",
  "coverage",
  "venv",
  "__pycache__",
  "site-packages",
]);

export function findOwnership(root: string, options: OwnershipOptions = {}): OwnershipResult {
  const codeowners = readCodeowners(root);
  if (codeowners) {
    const { files, truncated } = listFiles(root, options);
    const owners = new Map(files.map((file) => [file, codeownersOf(file, codeowners.rules)?.join(" ")]));
    const maxEntries = options.maxEntries ?? 2000;
    const entries = compress(owners).slice(0, maxEntries);
    const notes = truncated ? [`ownership resolved for the first ${files.length} files only`] : [];
    if (entries.length === maxEntries) notes.push(`ownership list capped at ${maxEntries} entries`);
    return { entries, source: { kind: "codeowners", file: codeowners.file }, notes };
  }
  const fromGit = ownersFromGit(root, options.maxCommits ?? 500);
  if (fromGit === undefined) {
    return {
      entries: [],
      source: { kind: "none" },
      notes: ["no CODEOWNERS file and not a git repository: no owners"],
    };
  }
  return { entries: fromGit, source: { kind: "git" }, notes: [] };
}

/**
 * The smallest list of path → owner covering every owned file: a folder whose files all share one owner is
 * one entry (`.` for the whole tree); otherwise its parts are listed.
 */
function compress(owners: ReadonlyMap<string, string | undefined>): OwnershipEntry[] {
  interface Folder {
    files: Map<string, string | undefined>;
    folders: Map<string, Folder>;
    owners: Set<string | undefined>;
  }
  const tree: Folder = { files: new Map(), folders: new Map(), owners: new Set() };
  for (const [file, owner] of owners) {
    const parts = file.split("/");
    let folder = tree;
    folder.owners.add(owner);
    for (const part of parts.slice(0, -1)) {
      let child = folder.folders.get(part);
      if (!child) {
        child = { files: new Map(), folders: new Map(), owners: new Set() };
        folder.folders.set(part, child);
      }
      child.owners.add(owner);
      folder = child;
    }
    folder.files.set(parts[parts.length - 1] as string, owner);
  }
  const entries: OwnershipEntry[] = [];
  const walk = (folder: Folder, prefix: string): void => {
    if (folder.owners.size === 1) {
      const [owner] = folder.owners;
      if (owner) entries.push({ path: prefix === "" ? "." : prefix, owner, source: "codeowners" });
      return;
    }
    for (const [name, child] of [...folder.folders].sort(([left], [right]) => left.localeCompare(right))) {
      walk(child, prefix === "" ? name : `${prefix}/${name}`);
    }
    for (const [name, owner] of [...folder.files].sort(([left], [right]) => left.localeCompare(right))) {
      if (owner)
        entries.push({ path: prefix === "" ? name : `${prefix}/${name}`, owner, source: "codeowners" });
    }
  };
  walk(tree, "");
  return entries;
}

function listFiles(root: string, options: OwnershipOptions): { files: string[]; truncated: boolean } {
  const maxFiles = options.maxFiles ?? 20_000;
  const excluded = new Set((options.exclude ?? []).map((file) => path.resolve(file)));
  const files: string[] = [];
  const pending = [""];
  while (pending.length > 0) {
    const folder = pending.shift() as string;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(root, folder), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const relative = folder === "" ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== ".git" && !HEAVY_FOLDERS.has(entry.name) && !entry.name.startsWith(".venv"))
          pending.push(relative);
      } else if (
        entry.isFile() &&
        !excluded.has(path.join(root, relative)) &&
        !/^defects\.ya?ml$/i.test(entry.name)
      ) {
        if (files.length >= maxFiles) return { files, truncated: true };
        files.push(relative);
      }
    }
  }
  return { files, truncated: false };
}

/** Most frequent author of the last `maxCommits` commits touching each top-level folder; undefined outside git. */
function ownersFromGit(root: string, maxCommits: number): OwnershipEntry[] | undefined {
  const inside = spawnSync("git", ["rev-parse", "--is-inside-work-tree"], {
    cwd: root,
    encoding: "utf8",
    timeout: 10_000,
  });
  if (inside.status !== 0 || inside.stdout.trim() !== "true") return undefined;
  // --relative: paths relative to the target root, commits outside it ignored (a target in a monorepo).
  const log = spawnSync(
    "git",
    ["log", `-n${maxCommits}`, "--no-merges", "--relative", "--name-only", "--format=%x1e%aN <%aE>"],
    { cwd: root, encoding: "utf8", timeout: 30_000, maxBuffer: 64 * 1024 * 1024 },
  );
  if (log.status !== 0) return [];
  const counts = new Map<string, Map<string, { commits: number; order: number }>>();
  let order = 0;
  for (const record of log.stdout.split("\x1e")) {
    const [author, ...files] = record.split("\n").filter((line) => line.trim() !== "");
    if (!author || files.length === 0) continue;
    order += 1;
    const folders = new Set(
      files.filter((file) => file.includes("/")).map((file) => file.split("/")[0] as string),
    );
    for (const folder of folders) {
      const byAuthor = counts.get(folder) ?? new Map<string, { commits: number; order: number }>();
      const current = byAuthor.get(author) ?? { commits: 0, order };
      byAuthor.set(author, { commits: current.commits + 1, order: current.order });
      counts.set(folder, byAuthor);
    }
  }
  const entries: OwnershipEntry[] = [];
  for (const [folder, byAuthor] of [...counts].sort(([left], [right]) => left.localeCompare(right))) {
    if (folder.startsWith(".") || HEAVY_FOLDERS.has(folder)) continue;
    if (!fs.existsSync(path.join(root, folder))) continue;
    // Ties go to whoever committed most recently (seen first: git log is newest first).
    const [owner] =
      [...byAuthor].sort(
        ([, left], [, right]) => right.commits - left.commits || left.order - right.order,
      )[0] ?? [];
    if (owner) entries.push({ path: folder, owner, source: "git" });
  }
  return entries;
}

/** The owner of a file by the map's ownership entries: the longest matching folder (or the file itself). */
export function ownerOf(entries: readonly OwnershipEntry[], file: string): OwnershipEntry | undefined {
  let best: OwnershipEntry | undefined;
  for (const entry of entries) {
    const covers = entry.path === "." || file === entry.path || file.startsWith(`${entry.path}/`);
    if (covers && (!best || best.path === "." || entry.path.length > best.path.length)) best = entry;
  }
  return best;
}
