import fs from "node:fs";
import path from "node:path";

// Paths are judged where the operating system would really put the bytes, not where the string seems to
// point: a symbolic link (the file itself or any folder above it) is followed, and `..` is applied to the
// real parent, exactly as open(2) does. Judging the text alone would let `tests/link/../../x` or a link
// planted inside the tree write anywhere.

/** Symbolic links followed before giving up, as the kernel does (ELOOP). */
const MAX_LINKS = 40;

/**
 * The absolute path `candidate` (relative to `base` unless absolute) really names: every existing
 * symbolic link followed, `..` applied to the real parent, and the part that does not exist yet appended
 * as written. A dangling link is followed to where it points (a write through it creates that file).
 * Answers undefined on a symbolic link loop.
 */
export function physicalPath(candidate: string, base: string): string | undefined {
  const absolute = path.isAbsolute(candidate) ? candidate : `${base}${path.sep}${candidate}`;
  const root = path.parse(absolute).root;
  const pending = splitSegments(absolute.slice(root.length));
  let current = root;
  let linksFollowed = 0;
  while (pending.length > 0) {
    const segment = pending.shift()!;
    if (segment === "..") {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, segment);
    const link = readLinkOrUndefined(next);
    if (link === undefined) {
      current = next;
      continue;
    }
    linksFollowed += 1;
    if (linksFollowed > MAX_LINKS) return undefined;
    // The link's target replaces the segment; a relative target starts from the folder holding the link.
    if (path.isAbsolute(link)) current = path.parse(link).root;
    pending.unshift(...splitSegments(path.isAbsolute(link) ? link.slice(current.length) : link));
  }
  return current;
}

export type ResolvedTargetPath =
  | {
      ok: true;
      /** Where the bytes really go (absolute, symbolic links followed). */
      absolute: string;
      /** `absolute` relative to the real target root, with `/` separators: what globs are matched against. */
      relative: string;
      /** The path as asked, normalised and relative to the root, with `/` separators. */
      requested: string;
    }
  | { ok: false; problem: string };

/**
 * Resolves a path an agent gave (relative to the target root, or absolute) and says why it is not a file
 * inside the target tree when it is not: an absolute path elsewhere, a `..` escape, or a symbolic link
 * (the file or a parent folder) whose real path leaves the root.
 */
export function resolveTargetPath(root: string, candidate: string): ResolvedTargetPath {
  if (typeof candidate !== "string" || candidate.trim() === "") {
    return { ok: false, problem: "the path is empty" };
  }
  if (candidate.includes("\0")) return { ok: false, problem: "the path contains a NUL byte" };
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    return { ok: false, problem: `the target root ${root} does not exist` };
  }
  const requested = lexicalRelative(root, realRoot, candidate);
  if (requested === undefined) {
    return {
      ok: false,
      problem: path.isAbsolute(candidate)
        ? `it is an absolute path outside the target root ${root}`
        : "its `..` segments climb out of the target root",
    };
  }
  const absolute = physicalPath(candidate, realRoot);
  if (absolute === undefined) return { ok: false, problem: "it runs into a loop of symbolic links" };
  const relative = relativeInside(realRoot, absolute);
  if (relative === undefined) {
    return {
      ok: false,
      problem: `it resolves through a symbolic link to ${absolute}, outside the target root`,
    };
  }
  if (relative === "") return { ok: false, problem: "it names the target root itself, not a file" };
  return { ok: true, absolute, relative, requested };
}

/** `target` relative to `root` with `/` separators, or undefined when it is not inside (or is) root. */
export function relativeInside(root: string, target: string): string | undefined {
  const relative = path.relative(root, target);
  if (relative === "") return "";
  if (path.isAbsolute(relative) || relative === ".." || relative.startsWith(`..${path.sep}`))
    return undefined;
  return relative.split(path.sep).join("/");
}

/** The path as written, normalised without touching the disk; undefined when it leaves the root. */
function lexicalRelative(root: string, realRoot: string, candidate: string): string | undefined {
  if (path.isAbsolute(candidate)) {
    const normalised = path.normalize(candidate);
    return relativeInside(root, normalised) ?? relativeInside(realRoot, normalised);
  }
  const normalised = path.posix.normalize(candidate.split(path.sep).join("/"));
  if (normalised === ".." || normalised.startsWith("../")) return undefined;
  return normalised === "." ? "" : normalised.replace(/\/+$/, "");
}

/** Only the platform's separators split: on POSIX a backslash is an ordinary file-name character. */
const SEPARATORS = path.sep === "\\" ? /[\\/]/ : /\//;

function splitSegments(text: string): string[] {
  return text.split(SEPARATORS).filter((segment) => segment !== "" && segment !== ".");
}

function readLinkOrUndefined(file: string): string | undefined {
  try {
    return fs.readlinkSync(file);
  } catch {
    // Not a link, or not there (yet): either way the segment is taken as written.
    return undefined;
  }
}
