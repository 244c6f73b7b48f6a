import fs from "node:fs";
import { QaasError } from "../errors.ts";
import { isLedgerKind, LEDGER_KINDS, type LedgerEntry, type LedgerKind } from "./ledger-kinds.ts";

// One run's ledger: JSON Lines, append-only, one entry per line. Crash-only rules:
// - every append is one synchronous write of a whole line, so an entry `append` has returned survives a
//   SIGKILL of the process (it is in the kernel's page cache, not in our memory);
// - a crash in the middle of that write can only leave the LAST line cut (no trailing newline): readers
//   drop it with a warning, and the next append cuts it off first (and says so in a `warning` entry);
// - any other bad line is corruption, not a crash, and reading fails naming the line.
// One writer per run (the runner); readers may be many.

export interface LedgerRead {
  entries: LedgerEntry[];
  warnings: string[];
}

interface ParsedLedger extends LedgerRead {
  /** What follows the last newline when the file does not end in one. */
  tail:
    | { state: "clean" }
    | { state: "unterminated"; entry: LedgerEntry }
    | { state: "cut"; line: number; offset: number; bytes: number };
}

export class LedgerFile {
  #nextSeq: number | undefined;
  #knownSize = -1;

  constructor(readonly file: string) {}

  read(): LedgerRead {
    const { entries, warnings } = this.#parseFile();
    return { entries, warnings };
  }

  /**
   * The whole lines written from byte `offset` on, and the offset after the last of them: a reader that
   * follows a growing ledger (the queue's publisher) parses each line once. A cut last line is left for a
   * later call, after the writer has mended it; a file shorter than `offset` (rewritten) is read whole.
   */
  readFrom(offset: number): { entries: LedgerEntry[]; offset: number } {
    let buffer: Buffer;
    try {
      const size = fs.statSync(this.file).size;
      const start = offset <= size ? offset : 0;
      buffer = Buffer.alloc(size - start);
      const descriptor = fs.openSync(this.file, "r");
      try {
        fs.readSync(descriptor, buffer, 0, buffer.length, start);
      } finally {
        fs.closeSync(descriptor);
      }
      offset = start;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { entries: [], offset: 0 };
      throw error;
    }
    const end = buffer.lastIndexOf(0x0a) + 1;
    try {
      const { entries } = parseLedgerText(buffer.subarray(0, end).toString("utf8"), this.file);
      return { entries, offset: offset + end };
    } catch (error) {
      // Name the bad line by its number in the whole file.
      this.#parseFile();
      throw error;
    }
  }

  append(kind: LedgerKind, data: Record<string, unknown>, agent?: string): LedgerEntry {
    if (!isLedgerKind(kind)) {
      throw new QaasError(
        "LEDGER_KIND_UNKNOWN",
        `"${String(kind)}" is not a ledger kind (valid: ${LEDGER_KINDS.join(", ")}); add it to src/store/ledger-kinds.ts first`,
      );
    }
    if (data === null || typeof data !== "object" || Array.isArray(data)) {
      throw new QaasError("LEDGER_DATA_INVALID", `ledger entry "${kind}": data must be an object`);
    }
    const descriptor = fs.openSync(this.file, "a+");
    try {
      const size = fs.fstatSync(descriptor).size;
      let seq = this.#nextSeq ?? 1;
      let repair = "";
      let cutAt: number | undefined;
      if (this.#nextSeq === undefined || size !== this.#knownSize) {
        // First append of this instance, or someone else wrote since: learn where the file stands.
        const parsed = this.#parseFile();
        seq = nextSeqAfter(parsed.entries);
        if (parsed.tail.state === "unterminated") repair = "\n";
        if (parsed.tail.state === "cut") {
          const { line, bytes, offset } = parsed.tail;
          const warning = this.#entry(seq, "warning", {
            message: `dropped ledger line ${line} (${bytes} bytes) cut by a crash`,
            file: this.file,
            line,
            bytes,
          });
          repair = `${serialize(warning)}\n`;
          cutAt = offset;
          seq += 1;
        }
      }
      const entry = this.#entry(seq, kind, data, agent);
      const text = `${repair}${serialize(entry)}\n`;
      if (cutAt !== undefined) fs.ftruncateSync(descriptor, cutAt);
      writeAll(descriptor, Buffer.from(text, "utf8"));
      this.#nextSeq = entry.seq + 1;
      this.#knownSize = fs.fstatSync(descriptor).size;
      return entry;
    } finally {
      fs.closeSync(descriptor);
    }
  }

  #entry(seq: number, kind: LedgerKind, data: Record<string, unknown>, agent?: string): LedgerEntry {
    const at = new Date().toISOString();
    return agent === undefined ? { seq, at, kind, data } : { seq, at, kind, agent, data };
  }

  #parseFile(): ParsedLedger {
    let text: string;
    try {
      text = fs.readFileSync(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        return { entries: [], warnings: [], tail: { state: "clean" } };
      }
      throw error;
    }
    return parseLedgerText(text, this.file);
  }
}

/** Parses a whole ledger; exported for tests and for tools that read a ledger copied elsewhere. */
export function parseLedgerText(text: string, file: string): ParsedLedger {
  const lines = text.split("\n");
  const terminated = text.endsWith("\n") || text.length === 0;
  const lastIndex = terminated ? lines.length - 2 : lines.length - 1;
  const entries: LedgerEntry[] = [];
  const warnings: string[] = [];
  let tail: ParsedLedger["tail"] = { state: "clean" };
  let offset = 0;
  for (let index = 0; index <= lastIndex; index += 1) {
    const line = lines[index] ?? "";
    const lineNumber = index + 1;
    const lineOffset = offset;
    offset += Buffer.byteLength(line, "utf8") + 1;
    if (line.trim() === "") continue;
    const isUnterminatedTail = !terminated && index === lastIndex;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (isUnterminatedTail) {
        const bytes = Buffer.byteLength(line, "utf8");
        warnings.push(
          `${file}: line ${lineNumber} was cut by a crash (${bytes} bytes, no newline); dropped it`,
        );
        tail = { state: "cut", line: lineNumber, offset: lineOffset, bytes };
        continue;
      }
      throw corrupt(file, lineNumber, "not valid JSON");
    }
    const problem = entryProblem(value);
    if (problem !== undefined) throw corrupt(file, lineNumber, problem);
    entries.push(value as LedgerEntry);
    if (isUnterminatedTail) tail = { state: "unterminated", entry: value as LedgerEntry };
  }
  return { entries, warnings, tail };
}

function entryProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "not a JSON object";
  const entry = value as Record<string, unknown>;
  if (typeof entry.seq !== "number" || !Number.isInteger(entry.seq) || entry.seq < 1) {
    return "seq must be a positive integer";
  }
  if (typeof entry.at !== "string") return "at must be a timestamp string";
  if (typeof entry.kind !== "string" || !isLedgerKind(entry.kind)) {
    return `kind "${String(entry.kind)}" is not a ledger kind`;
  }
  if (entry.agent !== undefined && typeof entry.agent !== "string") return "agent must be a string";
  if (entry.data === null || typeof entry.data !== "object" || Array.isArray(entry.data)) {
    return "data must be an object";
  }
  return undefined;
}

function corrupt(file: string, line: number, problem: string): QaasError {
  return new QaasError(
    "LEDGER_CORRUPT",
    `${file}: line ${line} is not a valid ledger entry (${problem}); only a cut LAST line can come from a crash, so this file was changed by something else — inspect that line`,
  );
}

function nextSeqAfter(entries: LedgerEntry[]): number {
  let highest = 0;
  for (const entry of entries) highest = Math.max(highest, entry.seq);
  return highest + 1;
}

function serialize(entry: LedgerEntry): string {
  try {
    return JSON.stringify(entry);
  } catch (error) {
    throw new QaasError(
      "LEDGER_DATA_INVALID",
      `ledger entry "${entry.kind}": data cannot be written as JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
}

function writeAll(descriptor: number, buffer: Buffer): void {
  let written = 0;
  while (written < buffer.length) {
    written += fs.writeSync(descriptor, buffer, written, buffer.length - written);
  }
}
