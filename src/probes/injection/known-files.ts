import fs from "node:fs";
import path from "node:path";
import { isSuccess } from "../http/http-types.ts";
import { joinUrl } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";

// Files the application itself ships, to aim file-reading probes at instead of system files: the entry
// points, route handlers and top-level sources of its own tree (when the profile gives the source path),
// and the scripts and styles its pages load. Each comes with two distinctive lines of its content, so a
// probe can tell "the answer is this file" from an answer that merely mentions it.

export interface KnownFile {
  /** Path relative to the application's root, with forward slashes (`app.py`, `static/app.js`). */
  relative: string;
  /** Absolute path on the target's machine, when the source tree is known. */
  absolute?: string;
  /** Two lines of the content long and specific enough to recognise it. */
  excerpts: [string, string];
  from: "source" | "served";
}

const SOURCE_FILE = /\.(py|js|mjs|cjs|ts|rb|php|java|go|cs|json|toml|cfg|ini|txt|md|html|yaml|yml)$/i;
const MAX_FILES = 2;

/** Two long, distinct lines (trimmed), or undefined for a file too small or too plain to recognise. */
export function excerptsOf(content: string): [string, string] | undefined {
  const lines = [
    ...new Set(
      content
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line.length >= 16 && line.length <= 200 && /[A-Za-z]/.test(line)),
    ),
  ];
  const ranked = [...lines].sort((left, right) => right.length - left.length);
  // A one-line file is recognisable by its line alone when that line is long.
  if (lines.length === 1 && ranked[0]!.length >= 24) return [ranked[0]!, ranked[0]!];
  if (lines.length < 2) return undefined;
  return [ranked[0]!, ranked[1]!];
}

function readSmall(file: string): string | undefined {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > 256_000) return undefined;
    const content = fs.readFileSync(file, "utf8");
    return content.includes("\u0000") ? undefined : content;
  } catch {
    return undefined;
  }
}

function sourceFiles(run: ProbeRun): KnownFile[] {
  const root = run.context.target?.root;
  if (!root || !fs.existsSync(root)) return [];
  const candidates: string[] = [...(run.target.profile?.entry_points ?? [])];
  for (const operation of run.map.operations)
    if (operation.handler?.file) candidates.push(operation.handler.file);
  try {
    for (const entry of fs.readdirSync(root, { withFileTypes: true }))
      if (entry.isFile() && SOURCE_FILE.test(entry.name)) candidates.push(entry.name);
  } catch {
    // an unreadable root has nothing to offer
  }
  const files: KnownFile[] = [];
  for (const candidate of [...new Set(candidates.map((file) => path.normalize(file)))]) {
    const absolute = path.resolve(root, candidate);
    const relative = path.relative(root, absolute).split(path.sep).join("/");
    if (relative.startsWith("..") || files.some((file) => file.relative === relative)) continue;
    const content = readSmall(absolute);
    const excerpts = content ? excerptsOf(content) : undefined;
    if (!excerpts) continue;
    files.push({ relative, absolute, excerpts, from: "source" });
    if (files.length >= MAX_FILES) break;
  }
  return files;
}

async function servedFiles(run: ProbeRun): Promise<KnownFile[]> {
  const origin = new URL(run.target.baseUrl).origin;
  const urls = new Set<string>();
  for (const page of run.map.pages)
    for (const link of [...(page.scripts ?? []), ...page.links]) {
      try {
        const url = new URL(link, joinUrl(run.target.baseUrl, page.path));
        if (url.origin === origin && /\.(js|css|txt|json|xml|html?)$/i.test(url.pathname))
          urls.add(url.pathname);
      } catch {
        // not a URL
      }
    }
  const files: KnownFile[] = [];
  for (const pathname of [...urls].slice(0, 6)) {
    const exchange = await send(run, undefined, {
      method: "GET",
      url: joinUrl(run.target.baseUrl, pathname),
    });
    if (!exchange || !isSuccess(exchange)) continue;
    const excerpts = excerptsOf(exchange.response?.body ?? "");
    if (!excerpts) continue;
    files.push({ relative: pathname.replace(/^\/+/, ""), excerpts, from: "served" });
    if (files.length >= 2) break;
  }
  return files;
}

/**
 * Small text files of the source tree with no `<` or `&` (documents, manifests, JSON): an XML parser can
 * include those as an external entity, where source code would break the document.
 */
export function plainTextFiles(run: ProbeRun, limit = 2): KnownFile[] {
  const root = run.context.target?.root;
  if (!root || !fs.existsSync(root)) return [];
  const found: KnownFile[] = [];
  const walk = (folder: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs
        .readdirSync(folder, { withFileTypes: true })
        .sort((left, right) => left.name.localeCompare(right.name));
    } catch {
      return;
    }
    for (const entry of entries) {
      if (found.length >= limit) return;
      const absolute = path.join(folder, entry.name);
      if (entry.isFile() && /\.(txt|md|json|cfg|ini|toml|csv)$/i.test(entry.name)) {
        const content = readSmall(absolute);
        const excerpts = content && !/[<&%]/.test(content) ? excerptsOf(content) : undefined;
        if (excerpts)
          found.push({
            relative: path.relative(root, absolute).split(path.sep).join("/"),
            absolute,
            excerpts,
            from: "source",
          });
      }
    }
    if (depth >= 3) return;
    for (const entry of entries)
      if (
        entry.isDirectory() &&
        !entry.name.startsWith(".") &&
        entry.name !== "node_modules" &&
        entry.name !== "__pycache__"
      )
        walk(path.join(folder, entry.name), depth + 1);
  };
  walk(root, 0);
  return found;
}

/** The files to aim at, source files first; cached per probe run. */
export async function knownFiles(run: ProbeRun): Promise<KnownFile[]> {
  const key = `injection:known-files:${run.target.baseUrl}`;
  let pending = run.context.shared.get(key) as Promise<KnownFile[]> | undefined;
  if (!pending) {
    pending = (async () => [...sourceFiles(run), ...(await servedFiles(run))])();
    run.context.shared.set(key, pending);
  }
  return pending;
}
