import fs from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { isAnswerKey, listCodeTree } from "./code-files.ts";

// Reading the target's source for a person or a model: a bounded text search and a bounded file read.
// Both refuse the answer key themselves (the guardrail refuses it first for read_file; search has no
// single path to judge), and neither leaves the target root, through `..` or through a symbolic link.

export interface SearchOptions {
  query: string;
  regex?: boolean;
  caseSensitive?: boolean;
  /** A folder prefix or a glob, relative to the root. */
  path?: string;
  maxResults?: number;
  answerKey?: string;
}

export interface SearchMatch {
  file: string;
  line: number;
  text: string;
}

export interface SearchResult {
  matches: SearchMatch[];
  truncated: boolean;
  files_searched: number;
}

const MAX_LINE_CHARS = 300;

export function searchCode(root: string, options: SearchOptions): SearchResult | string {
  let pattern: RegExp;
  try {
    const source = options.regex ? options.query : options.query.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    pattern = new RegExp(source, options.caseSensitive ? "" : "i");
  } catch (error) {
    return `invalid regular expression ${JSON.stringify(options.query)}: ${error instanceof Error ? error.message : String(error)}`;
  }
  const limit = Math.min(Math.max(options.maxResults ?? 50, 1), 200);
  const tree = listCodeTree(root, { answerKey: options.answerKey });
  const scope = scopeMatcher(options.path);
  const files = [...tree.code.map((file) => file.file), ...tree.text].filter(scope).sort();
  const matches: SearchMatch[] = [];
  let searched = 0;
  for (const file of files) {
    if (isAnswerKey(root, file, options.answerKey)) continue;
    let text: string;
    try {
      text = fs.readFileSync(path.join(root, file), "utf8");
    } catch {
      continue;
    }
    searched += 1;
    const lines = text.split("\n");
    for (let index = 0; index < lines.length; index += 1) {
      const line = lines[index]!;
      if (!pattern.test(line.length > 4000 ? line.slice(0, 4000) : line)) continue;
      if (matches.length >= limit) return { matches, truncated: true, files_searched: searched };
      const trimmed = line.trim();
      matches.push({
        file,
        line: index + 1,
        text: trimmed.length > MAX_LINE_CHARS ? `${trimmed.slice(0, MAX_LINE_CHARS)}…` : trimmed,
      });
    }
  }
  return { matches, truncated: false, files_searched: searched };
}

function scopeMatcher(scope: string | undefined): (file: string) => boolean {
  if (!scope) return () => true;
  const cleaned = scope.replace(/^\.\//, "").replace(/\/+$/, "");
  if (!/[*?[\]{}]/.test(cleaned)) return (file) => file === cleaned || file.startsWith(`${cleaned}/`);
  const matcher = picomatch(cleaned, { dot: true });
  return (file) => matcher(file);
}

export interface ReadOptions {
  path: string;
  startLine?: number;
  maxLines?: number;
  answerKey?: string;
}

export interface ReadResult {
  path: string;
  start_line: number;
  end_line: number;
  total_lines: number;
  truncated: boolean;
  text: string;
}

/** One file of the target, relative to its root; a string says why it cannot be read. */
export function readTargetFile(root: string, options: ReadOptions): ReadResult | string {
  const requested = options.path.replace(/\\/g, "/");
  const absolute = path.resolve(root, requested);
  const realRoot = fs.realpathSync(root);
  let real: string;
  try {
    real = fs.realpathSync(absolute);
  } catch {
    return `no file ${JSON.stringify(options.path)} in the target (paths are relative to the target root); search_code finds files`;
  }
  const relative = path.relative(realRoot, real).split(path.sep).join("/");
  if (relative.startsWith("..") || path.isAbsolute(relative)) {
    return `${JSON.stringify(options.path)} is outside the target root; give a path relative to it`;
  }
  if (isAnswerKey(root, relative, options.answerKey) || isAnswerKey(root, requested, options.answerKey)) {
    return `${JSON.stringify(options.path)} is the answer key of this target's benchmark and is never readable`;
  }
  const stat = fs.statSync(real);
  if (!stat.isFile()) return `${JSON.stringify(options.path)} is not a file`;
  if (stat.size > 4 * 1024 * 1024)
    return `${JSON.stringify(options.path)} is ${stat.size} bytes; only files up to 4 MiB are read`;
  const buffer = fs.readFileSync(real);
  if (buffer.subarray(0, 8000).includes(0)) return `${JSON.stringify(options.path)} is a binary file`;
  const lines = buffer.toString("utf8").split("\n");
  const start = Math.max(1, Math.floor(options.startLine ?? 1));
  const count = Math.min(Math.max(options.maxLines ?? 400, 1), 2000);
  const slice = lines.slice(start - 1, start - 1 + count);
  return {
    path: relative,
    start_line: start,
    end_line: start - 1 + slice.length,
    total_lines: lines.length,
    truncated: start - 1 + slice.length < lines.length,
    text: slice.join("\n"),
  };
}
