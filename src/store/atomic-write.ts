import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * Writes a whole file or nothing: a reader (or a resume after SIGKILL) sees the old content or the new,
 * never half of it. Renaming over a symlink replaces the link instead of writing through it.
 */
export function writeFileAtomic(file: string, content: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  const descriptor = fs.openSync(temporary, "wx");
  try {
    fs.writeFileSync(descriptor, content);
    fs.fsyncSync(descriptor);
  } finally {
    fs.closeSync(descriptor);
  }
  try {
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
}

/** Like `writeFileAtomic`, but fails with EEXIST instead of replacing a file that is already there. */
export function writeFileExclusive(file: string, content: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  fs.writeFileSync(temporary, content, { flag: "wx" });
  try {
    // link() refuses an existing name atomically, which rename() would silently overwrite.
    fs.linkSync(temporary, file);
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/** Temporary files left by a write that was killed half-way; readers skip them. */
export function isTemporaryFile(name: string): boolean {
  return name.endsWith(".tmp");
}
