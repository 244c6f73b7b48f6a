import fs from "node:fs";
import path from "node:path";
import { QaasError } from "../errors.ts";

// Artifacts are addressed as `artifact://<run>/<name>`, where <name> may hold `/` subfolders. A URI comes
// from an agent, so resolving one is a security boundary: whatever it says, the file it reaches must lie
// inside that run's artifacts folder inside the store, after symlinks are followed.

/** Run ids and other names that become one folder: no separators, no leading dot. */
export const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

// Kept to characters that need no escaping in a URI or a shell, so a URI is its own file name and `%`
// never has to be decoded (a `%` in a URI is refused, which closes encoded traversal for good).
const NAME_SEGMENT = /^[A-Za-z0-9._~@+=,:{}()[\]-]+$/;
const ALLOWED_CHARACTERS = "letters, digits and . _ ~ @ + = , : { } ( ) [ ] -";
const MAX_NAME_LENGTH = 1024;

export function artifactUri(runId: string, name: string): string {
  return `artifact://${runId}/${name}`;
}

/** The folder segments of an artifact name; throws ARTIFACT_ESCAPES or ARTIFACT_NAME_INVALID. */
export function artifactNameSegments(name: string): string[] {
  if (name.startsWith("/") || name.includes("\\") || /^[A-Za-z]:/.test(name)) {
    throw escapes(name, "an artifact name is relative to the run's artifacts folder");
  }
  const segments = name.split("/");
  if (segments.some((segment) => segment === ".." || segment === ".")) {
    throw escapes(name, "`.` and `..` segments are not allowed");
  }
  if (name.length === 0 || name.length > MAX_NAME_LENGTH || segments.some((segment) => segment === "")) {
    throw new QaasError(
      "ARTIFACT_NAME_INVALID",
      `artifact name "${name}" is empty, too long or has an empty segment (like "a//b" or a trailing /)`,
    );
  }
  for (const segment of segments) {
    if (!NAME_SEGMENT.test(segment)) {
      throw new QaasError(
        "ARTIFACT_NAME_INVALID",
        `artifact name "${name}": segment "${segment}" may only contain ${ALLOWED_CHARACTERS}`,
      );
    }
  }
  return segments;
}

/** Throws RUN_ID_INVALID unless the run id can be one folder or key segment. */
export function assertRunId(runId: string): void {
  if (!SAFE_NAME.test(runId)) {
    throw new QaasError(
      "RUN_ID_INVALID",
      `"${runId}" is not a run id: it starts with a letter or digit and holds only letters, digits and . _ -`,
    );
  }
}

/** `[runId, ...name segments]`, where an artifact lies below a store's root; throws on a bad run id or name. */
export function artifactKeySegments(runId: string, name: string): string[] {
  assertRunId(runId);
  return [runId, ...artifactNameSegments(name)];
}

export interface ParsedArtifactUri {
  runId: string;
  name: string;
  segments: string[];
}

export function parseArtifactUri(uri: string): ParsedArtifactUri {
  const match = /^artifact:\/\/([^/]*)\/(.*)$/s.exec(uri);
  if (!match) {
    throw new QaasError("ARTIFACT_URI_INVALID", `"${uri}" is not an artifact URI (artifact://<run>/<name>)`);
  }
  const runId = match[1] ?? "";
  const name = match[2] ?? "";
  if (uri.includes("%")) {
    const decoded = decodeFully(uri);
    if (/(^|[/\\])\.\.([/\\]|$)/.test(decoded)) throw escapes(uri, "it holds an encoded `..`");
    throw new QaasError("ARTIFACT_URI_INVALID", `"${uri}": artifact URIs never contain "%"`);
  }
  if (!SAFE_NAME.test(runId)) throw escapes(uri, `"${runId}" is not a run id`);
  return { runId, name, segments: artifactNameSegments(name) };
}

/**
 * The absolute real path of an existing artifact. Refuses (ARTIFACT_ESCAPES) anything that would reach
 * outside `<home>/runs/<run>/artifacts` — traversal, absolute names, encoded traversal, a symlink pointing
 * out, or a run folder that is itself a link out of the store.
 */
export function resolveArtifactUri(home: string, uri: string): string {
  const { runId, segments } = parseArtifactUri(uri);
  const root = path.join(home, "runs", runId, "artifacts");
  if (!fs.existsSync(root)) {
    throw new QaasError(
      "ARTIFACT_NOT_FOUND",
      `${uri}: run "${runId}" has no artifacts folder in ${home} (list runs with \`qaas runs\`)`,
    );
  }
  const realRoot = fs.realpathSync(root);
  if (!isInside(fs.realpathSync(home), realRoot)) {
    throw escapes(uri, `the artifacts folder of run "${runId}" lies outside the store`);
  }
  const candidate = path.join(root, ...segments);
  let realCandidate: string;
  try {
    realCandidate = fs.realpathSync(candidate);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new QaasError("ARTIFACT_NOT_FOUND", `${uri}: no such artifact (looked for ${candidate})`);
  }
  if (!isInside(realRoot, realCandidate)) throw escapes(uri, "it leads outside the run's artifacts folder");
  return realCandidate;
}

/** Checks, before writing, that the folder an artifact goes to has not been linked out of the root. */
export function assertWritableInside(root: string, file: string, uri: string): void {
  const realRoot = fs.realpathSync(root);
  const realParent = fs.realpathSync(path.dirname(file));
  if (realParent !== realRoot && !isInside(realRoot, realParent)) {
    throw escapes(uri, "its folder leads outside the run's artifacts folder");
  }
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative !== "" &&
    relative !== ".." &&
    !relative.startsWith(`..${path.sep}`) &&
    !path.isAbsolute(relative)
  );
}

function decodeFully(text: string): string {
  let current = text;
  for (let round = 0; round < 4; round += 1) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return current;
    }
    if (next === current) return current;
    current = next;
  }
  return current;
}

function escapes(what: string, why: string): QaasError {
  return new QaasError("ARTIFACT_ESCAPES", `refused artifact "${what}": ${why}`);
}
