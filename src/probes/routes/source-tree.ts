import path from "node:path";
import { isVendoredFolder, readTreeFile, walkFiles } from "../source/walk-files.ts";

// Which files of a target's tree a source probe reads. Dependencies, build output, virtualenvs and tests
// say nothing about what the application serves; the answer key must never be read at all.

/** Tests and fixtures say nothing about what the application serves. */
const TEST_FOLDERS = new Set([
  "test",
  "tests",
  "__tests__",
  "__mocks__",
  "spec",
  "specs",
  "e2e",
  "cypress",
  "playwright",
  "fixtures",
]);

/** Files a browser downloads as they are (jQuery, Bootstrap, bundles): no server declares a route there. */
const BROWSER_ASSET_FOLDERS = new Set(["public", "static", "assets", "wwwroot", "staticfiles"]);

const TEST_FILE =
  /(\.|_)(test|spec)\.[cm]?[jt]sx?$|^test_.*\.py$|_test\.py$|^conftest\.py$|\.d\.ts$|\.min\.js$/;
const FORBIDDEN_FILE = /^defects\.ya?ml$/i;

export interface SourceTreeOptions {
  /** Absolute paths never to read (the golden ledger). */
  exclude?: string[];
  /** Stop after this many files (default 5000). */
  maxFiles?: number;
  /** Skip files larger than this (default 512 KiB): generated bundles, not code someone routes in. */
  maxFileBytes?: number;
  /** Also skip folders of browser assets (`public/`, `static/`): for readers of server code only. */
  skipBrowserAssets?: boolean;
}

export interface SourceTree {
  /** Paths relative to the root, with `/` separators, sorted. */
  files: string[];
  /** True when `maxFiles` cut the listing short. */
  truncated: boolean;
}

/** Lists source files under `root` whose extension is in `extensions` (e.g. `.ts`, `.py`). */
export function listSourceFiles(
  root: string,
  extensions: ReadonlySet<string>,
  options: SourceTreeOptions = {},
): SourceTree {
  const excluded = new Set((options.exclude ?? []).map((file) => path.resolve(file)));
  const walked = walkFiles(root, {
    skipFolder: (name) =>
      isSkippedFolder(name) || (options.skipBrowserAssets === true && BROWSER_ASSET_FOLDERS.has(name)),
    keep: (relative, name) =>
      extensions.has(path.extname(name)) &&
      !TEST_FILE.test(name) &&
      !FORBIDDEN_FILE.test(name) &&
      !excluded.has(path.join(root, relative)),
    maxFiles: options.maxFiles ?? 5000,
    maxFileBytes: options.maxFileBytes ?? 512 * 1024,
  });
  return { files: walked.files.sort(), truncated: walked.truncated };
}

export function isSkippedFolder(name: string): boolean {
  return isVendoredFolder(name) || TEST_FOLDERS.has(name);
}

/** Reads a file of the tree as text, or undefined when it cannot be read. */
export const readSource = readTreeFile;
