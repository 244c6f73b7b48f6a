import fs from "node:fs";
import path from "node:path";
import { isVendoredFolder, readTreeFile, walkFiles } from "../source/walk-files.ts";

// The files of a target that ARCHITECT reads. Unlike the route scanner, tests stay in: they are part of
// the import graph (and reach code), they are only never reported. Dependencies, build output, virtual
// environments and tool folders are left out, and the answer key is never listed at all.

export const JAVASCRIPT_EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
/** Text files that can name code (scripts, Dockerfiles, HTML script tags) or be searched. */
const TEXT_EXTENSIONS = new Set([
  ".json",
  ".yaml",
  ".yml",
  ".toml",
  ".cfg",
  ".ini",
  ".html",
  ".htm",
  ".sh",
  ".md",
  ".txt",
  ".sql",
  ".css",
  ".svelte",
  ".vue",
  // Other languages' source: searchable, never part of the graph.
  ".go",
  ".rb",
  ".java",
  ".kt",
  ".rs",
  ".php",
  ".cs",
  ".graphql",
  ".prisma",
  ".xml",
  ".properties",
]);
const TEXT_NAMES = /^(Dockerfile.*|Procfile|Makefile|Containerfile|\.env\.example|requirements.*\.txt)$/;
const ANSWER_KEY_NAME = /^defects\.ya?ml$/i;

const TEST_FOLDER = /^(test|tests|__tests__|__mocks__|spec|specs|e2e|cypress|playwright)$/;
// Stories are loaded by tooling by name, like tests: entries that are never reported.
const TEST_FILE = /(\.|_)(test|spec|stories|story)\.[cm]?[jt]sx?$|^test_.*\.py$|_test\.py$|^conftest\.py$/;
/** Tooling configuration: code that configures tools, not application modules. */
const CONFIG_FILE =
  /^[\w-]+\.config\.[cm]?[jt]s$|^\.?[a-z]+rc\.[cm]?js$|^(gulpfile|gruntfile|jakefile)\.[cm]?[jt]s$|^(setup|noxfile|fabfile|gunicorn\.conf)\.py$/i;

export type Language = "javascript" | "python";

export interface CodeFile {
  /** Relative to the target root, `/` separators. */
  file: string;
  language: Language;
  test: boolean;
  config: boolean;
  /** A `.d.ts` file: types only, no runtime. */
  declaration: boolean;
}

export interface CodeTree {
  root: string;
  code: CodeFile[];
  /** Other text files (manifests, scripts, HTML), relative paths. */
  text: string[];
  truncated: boolean;
}

export interface CodeTreeOptions {
  /** Absolute path of the golden ledger: never listed, never read. */
  answerKey?: string;
  maxFiles?: number;
  maxFileBytes?: number;
}

export const isSkippedFolder = isVendoredFolder;

/** Whether a path (relative or absolute) is the answer key: the golden ledger or any defects.yaml. */
export function isAnswerKey(root: string, relative: string, answerKey: string | undefined): boolean {
  if (ANSWER_KEY_NAME.test(path.basename(relative))) return true;
  if (answerKey === undefined) return false;
  const absolute = path.resolve(root, relative);
  if (absolute === path.resolve(answerKey)) return true;
  try {
    return fs.realpathSync(absolute) === fs.realpathSync(answerKey);
  } catch {
    return false;
  }
}

export function isTestPath(relative: string): boolean {
  const parts = relative.split("/");
  const name = parts.pop() ?? "";
  return TEST_FILE.test(name) || parts.some((part) => TEST_FOLDER.test(part));
}

/** Generated code: nobody maintains it by hand, so its structure is never a finding. */
const GENERATED =
  /(^|\/)(__generated__|generated|gen)\/|\.generated\.[cm]?[jt]sx?$|\.pb\.[cm]?[jt]s$|_pb2(_grpc)?\.py$/;

/** Tool configuration or generated code: part of the graph (and entries), never reported. */
export function isConfigFile(relative: string): boolean {
  return CONFIG_FILE.test(path.posix.basename(relative)) || GENERATED.test(relative);
}

export function languageOf(relative: string): Language | undefined {
  const extension = path.posix.extname(relative);
  if (extension === ".py") return "python";
  return JAVASCRIPT_EXTENSIONS.includes(extension) ? "javascript" : undefined;
}

/** Lists code and text files under `root`, breadth first and sorted, skipping tool and vendor folders. */
export function listCodeTree(root: string, options: CodeTreeOptions = {}): CodeTree {
  const walked = walkFiles(root, {
    skipFolder: isSkippedFolder,
    keep: (relative, name) => {
      if (isAnswerKey(root, relative, options.answerKey)) return false;
      const language = languageOf(relative);
      if (language) return !/\.min\.js$/.test(name);
      return TEXT_EXTENSIONS.has(path.extname(name)) || TEXT_NAMES.test(name);
    },
    maxFiles: options.maxFiles ?? 5000,
    maxFileBytes: options.maxFileBytes ?? 1024 * 1024,
  });
  const code: CodeFile[] = [];
  const text: string[] = [];
  for (const relative of walked.files) {
    const language = languageOf(relative);
    if (!language) {
      text.push(relative);
      continue;
    }
    code.push({
      file: relative,
      language,
      test: isTestPath(relative),
      config: isConfigFile(relative),
      declaration: /\.d\.[cm]?ts$/.test(relative),
    });
  }
  code.sort((left, right) => left.file.localeCompare(right.file));
  text.sort();
  return { root, code, text, truncated: walked.truncated };
}

export const readText = readTreeFile;
