import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { QaasError } from "../../../errors.ts";

/**
 * A source repository as the builder reads it: a git checkout or bare git directory (read at HEAD, so the
 * snapshot records exactly which commit it holds), or a plain folder (an unpacked archive; no commit).
 */
export interface SourceRepository {
  location: string;
  commit?: string;
  /** Day of the commit (YYYY-MM-DD), in UTC. */
  commitDate?: string;
  /** Paths (with `/`) of the files under `folder` whose names end in one of `extensions`, sorted. */
  list(folder: string, extensions: readonly string[]): string[];
  /** Contents of several files at once, keyed by path. */
  readAll(paths: readonly string[]): Map<string, string>;
  /** sha256 over the listed files' paths and bytes, for a plain folder (git sources have a commit). */
  digest(paths: readonly string[]): string | undefined;
}

const MAX_BUFFER = 1 << 30;

function git(location: string, args: string[], input?: string): Buffer {
  return execFileSync("git", ["-C", location, ...args], {
    input,
    maxBuffer: MAX_BUFFER,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** Whether `location` is itself a repository's top (a work tree's root or a bare git directory), not a folder inside one. */
function isGitRepository(location: string): boolean {
  try {
    const real = fs.realpathSync(location);
    const bare = git(location, ["rev-parse", "--is-bare-repository"]).toString("utf8").trim() === "true";
    const top = git(location, ["rev-parse", bare ? "--absolute-git-dir" : "--show-toplevel"])
      .toString("utf8")
      .trim();
    return fs.realpathSync(top) === real;
  } catch {
    return false;
  }
}

/** `git cat-file --batch` output: `<sha> blob <size>\n<bytes>\n` per requested object. */
function parseBatch(output: Buffer, paths: readonly string[], location: string): Map<string, string> {
  const files = new Map<string, string>();
  let offset = 0;
  for (const file of paths) {
    const newline = output.indexOf(10, offset);
    const header = output.subarray(offset, newline).toString("utf8");
    const size = Number(header.split(" ")[2]);
    if (!header.includes(" blob ") || !Number.isFinite(size))
      throw new QaasError(
        "ADVISORY_SOURCE_UNREADABLE",
        `${location}: cannot read ${file} at HEAD (${header})`,
      );
    files.set(file, output.subarray(newline + 1, newline + 1 + size).toString("utf8"));
    offset = newline + 1 + size + 1;
  }
  return files;
}

function gitRepository(location: string): SourceRepository {
  const [commit, date] = git(location, ["log", "-1", "--format=%H %cI", "HEAD"])
    .toString("utf8")
    .trim()
    .split(" ");
  const commitDate = date ? new Date(date).toISOString().slice(0, 10) : undefined;
  return {
    location,
    commit,
    commitDate,
    list(folder, extensions) {
      const output = git(location, ["ls-tree", "-r", "--name-only", "-z", "HEAD", "--", folder]).toString(
        "utf8",
      );
      return output
        .split("\0")
        .filter((file) => file && extensions.some((extension) => file.endsWith(extension)))
        .sort();
    },
    readAll(paths) {
      if (paths.length === 0) return new Map();
      const output = git(location, ["cat-file", "--batch"], paths.map((file) => `HEAD:${file}\n`).join(""));
      return parseBatch(output, paths, location);
    },
    digest: () => undefined,
  };
}

function folderRepository(location: string): SourceRepository {
  const walk = (folder: string, extensions: readonly string[]): string[] => {
    const absolute = path.join(location, folder);
    if (!fs.existsSync(absolute)) return [];
    if (fs.statSync(absolute).isFile()) return extensions.some((e) => folder.endsWith(e)) ? [folder] : [];
    return fs
      .readdirSync(absolute, { withFileTypes: true })
      .flatMap((entry) => walk(folder ? `${folder}/${entry.name}` : entry.name, extensions));
  };
  return {
    location,
    list: (folder, extensions) => walk(folder, extensions).sort(),
    readAll: (paths) =>
      new Map(paths.map((file) => [file, fs.readFileSync(path.join(location, file), "utf8")])),
    digest(paths) {
      const hash = crypto.createHash("sha256");
      for (const file of [...paths].sort())
        hash
          .update(file)
          .update("\0")
          .update(fs.readFileSync(path.join(location, file)));
      return hash.digest("hex");
    },
  };
}

export function openRepository(location: string, flag: string): SourceRepository {
  if (!fs.existsSync(location) || !fs.statSync(location).isDirectory())
    throw new QaasError(
      "ADVISORY_SOURCE_MISSING",
      `${flag} ${location}: no such folder (a checkout, a bare git directory or an unpacked copy)`,
    );
  return isGitRepository(location) ? gitRepository(location) : folderRepository(location);
}
