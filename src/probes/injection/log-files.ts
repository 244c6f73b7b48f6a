import fs from "node:fs";
import path from "node:path";

// The log files an application writes inside its own folder (`app.log`, `logs/access.log`): what a
// request appended to them is read back by offset, so a probe can see how its input was logged. Read
// only; files are found once, and a file that appears later (a logger that rotates) is picked up on the
// next scan.

const SKIPPED = new Set(["node_modules", ".git", ".venv", "venv", "__pycache__", "dist", "build", ".next"]);
const MAX_DEPTH = 4;
const MAX_FILES = 20;
/** More than this appended between two reads is a busy log: only the newest part is read. */
const MAX_READ = 1_000_000;

/** Appended text kept per file for `find`, newest part only. */
const KEPT = 2_000_000;

export class LogFiles {
  private readonly offsets = new Map<string, number>();
  private readonly kept = new Map<string, string>();

  private constructor(private readonly root: string) {}

  /** The log files under `root` now, read from their current end on. */
  static watch(root: string): LogFiles {
    const watcher = new LogFiles(root);
    for (const file of findLogFiles(root)) watcher.offsets.set(file, sizeOf(file));
    return watcher;
  }

  /** Files watched, relative to the root. */
  files(): string[] {
    return [...this.offsets.keys()].map((file) => path.relative(this.root, file));
  }

  /** Reads what was appended since the last read and keeps it for `find`. */
  refresh(): void {
    for (const { file, text } of this.appended()) {
      const kept = `${this.kept.get(file) ?? ""}${text}`;
      this.kept.set(file, kept.length > KEPT ? kept.slice(-KEPT) : kept);
    }
  }

  /** The file and the text around `token` wherever the kept log text holds it. */
  find(token: string, around = 300): { file: string; excerpt: string; before: string } | undefined {
    for (const [file, text] of this.kept) {
      const at = text.indexOf(token);
      if (at < 0) continue;
      return {
        file,
        excerpt: text.slice(Math.max(0, at - around), at + token.length + around),
        before: text.slice(Math.max(0, at - 2), at),
      };
    }
    return undefined;
  }

  /** Text appended to each log file since the last read (files that appeared since count from 0). */
  appended(): Array<{ file: string; text: string }> {
    for (const file of findLogFiles(this.root)) if (!this.offsets.has(file)) this.offsets.set(file, 0);
    const found: Array<{ file: string; text: string }> = [];
    for (const [file, offset] of this.offsets) {
      const size = sizeOf(file);
      // A truncated or rotated file starts over.
      const from = size < offset ? 0 : Math.max(offset, size - MAX_READ);
      this.offsets.set(file, size);
      if (size <= from) continue;
      found.push({ file: path.relative(this.root, file), text: readRange(file, from, size) });
    }
    return found;
  }
}

function findLogFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (folder: string, depth: number) => {
    if (depth > MAX_DEPTH || found.length >= MAX_FILES) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory() && !SKIPPED.has(entry.name)) walk(full, depth + 1);
      else if (entry.isFile() && /\.log(\.\d+)?$/i.test(entry.name) && found.length < MAX_FILES)
        found.push(full);
    }
  };
  walk(root, 0);
  return found;
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

function readRange(file: string, from: number, to: number): string {
  const handle = fs.openSync(file, "r");
  try {
    const buffer = Buffer.alloc(to - from);
    fs.readSync(handle, buffer, 0, buffer.length, from);
    return buffer.toString("utf8");
  } finally {
    fs.closeSync(handle);
  }
}
