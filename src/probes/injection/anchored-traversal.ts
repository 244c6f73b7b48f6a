import path from "node:path";
import type { KnownFile } from "./known-files.ts";

// Traversal from a value the application accepts. An application that checks only that a name starts with
// its documents folder (`docs/…`, `/srv/app/files/…`) without resolving `..` first refuses every bare
// `../`, yet reads `docs/../../app.py`. So a document the application ships is asked for by the names it
// may go by (its path from the tree's root, shorter tails of it, its absolute path); the form that brings
// the document back is the prefix the check wants, and the climb starts from its folder.

/** The names a shipped document may be asked for by, longest first, then its absolute path. */
export function anchorNames(document: KnownFile): string[] {
  const segments = document.relative.split("/");
  const tails = segments.slice(0, -1).map((_, index) => segments.slice(index).join("/"));
  return [...tails, ...(document.absolute ? [document.absolute] : [])];
}

/**
 * The value that climbs from the folder of `anchor` (a name that brought `document` back) to `target`, with
 * `up` as the step; undefined when the anchor gives no folder to climb from.
 */
export function climbFrom(
  anchor: string,
  document: KnownFile,
  target: KnownFile,
  up: string,
): string | undefined {
  const folder = path.posix.dirname(anchor);
  if (folder === "." || folder === "/") return undefined;
  let steps: number;
  if (path.posix.isAbsolute(anchor)) {
    steps = path.posix.dirname(document.relative).split("/").length;
  } else {
    if (!document.relative.endsWith(anchor)) return undefined;
    const base = document.relative.slice(0, document.relative.length - anchor.length);
    steps = folder.split("/").length + base.split("/").filter(Boolean).length;
  }
  return `${folder}/${up.repeat(steps)}${target.relative}`;
}
