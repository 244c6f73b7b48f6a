import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type DefectEnvelope, validateEnvelope } from "../envelope/envelope.ts";
import { QaasError } from "../errors.ts";
import {
  artifactNameSegments,
  artifactUri,
  assertWritableInside,
  resolveArtifactUri,
  SAFE_NAME,
} from "./artifacts.ts";
import { isTemporaryFile, writeFileAtomic } from "./atomic-write.ts";
import { LedgerFile, type LedgerRead } from "./ledger-file.ts";
import type { LedgerEntry, LedgerKind } from "./ledger-kinds.ts";
import { type RunMeta, type RunSummary, summarizeRun } from "./run-summary.ts";

// One run on disk: `<home>/runs/<id>/{run.json, ledger.jsonl, envelopes/, artifacts/, report.json,
// progress.log}`. Everything a run knows is in these files, so a killed run can be read, listed and resumed
// from them; progress.log is for people only (nothing reads it back).

export const LEDGER_FILE = "ledger.jsonl";
export const PROGRESS_FILE = "progress.log";
const META_FILE = "run.json";
const REPORT_FILE = "report.json";

export interface CreateRunOptions {
  /** A chosen id (letters, digits, `.`, `_`, `-`); by default a new sortable one. */
  runId?: string;
  mode: string;
  target: string;
}

export class RunStore {
  readonly #ledger: LedgerFile;

  private constructor(
    readonly home: string,
    readonly runId: string,
    readonly dir: string,
  ) {
    this.#ledger = new LedgerFile(path.join(dir, LEDGER_FILE));
  }

  static create(home: string, options: CreateRunOptions): RunStore {
    const runsDir = path.join(home, "runs");
    fs.mkdirSync(runsDir, { recursive: true });
    if (options.runId !== undefined) assertRunId(options.runId);
    for (let attempt = 0; ; attempt += 1) {
      const runId = options.runId ?? newRunId();
      const dir = path.join(runsDir, runId);
      try {
        // mkdir without `recursive` fails if the folder exists: that is what makes an id unique.
        fs.mkdirSync(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if (options.runId !== undefined) {
          throw new QaasError("RUN_EXISTS", `run "${runId}" already exists in ${runsDir}; choose another id`);
        }
        if (attempt > 20) throw error;
        continue;
      }
      fs.mkdirSync(path.join(dir, "envelopes"));
      fs.mkdirSync(path.join(dir, "artifacts"));
      fs.writeFileSync(path.join(dir, LEDGER_FILE), "", { flag: "wx" });
      const meta: RunMeta = {
        id: runId,
        mode: options.mode,
        target: options.target,
        created_at: new Date().toISOString(),
        pid: process.pid,
        host: os.hostname(),
      };
      writeFileAtomic(path.join(dir, META_FILE), `${JSON.stringify(meta, null, 2)}\n`);
      return new RunStore(home, runId, dir);
    }
  }

  static open(home: string, runId: string): RunStore {
    const dir = path.join(home, "runs", runId);
    if (!SAFE_NAME.test(runId) || !fs.existsSync(path.join(dir, LEDGER_FILE))) {
      throw new QaasError(
        "RUN_NOT_FOUND",
        `no run "${runId}" in ${path.join(home, "runs")}; list runs with \`qaas runs\` (or pass --home DIR)`,
      );
    }
    return new RunStore(home, runId, dir);
  }

  /** Every run in the store, newest first. A run whose ledger is corrupt is listed as `corrupt`. */
  static list(home: string): RunSummary[] {
    const runsDir = path.join(home, "runs");
    if (!fs.existsSync(runsDir)) return [];
    const summaries: RunSummary[] = [];
    for (const name of fs.readdirSync(runsDir)) {
      if (!SAFE_NAME.test(name) || !fs.existsSync(path.join(runsDir, name, LEDGER_FILE))) continue;
      summaries.push(new RunStore(home, name, path.join(runsDir, name)).summary());
    }
    return summaries.sort(
      (left, right) => right.started.localeCompare(left.started) || right.id.localeCompare(left.id),
    );
  }

  get ledgerPath(): string {
    return path.join(this.dir, LEDGER_FILE);
  }

  get envelopesDir(): string {
    return path.join(this.dir, "envelopes");
  }

  get artifactsDir(): string {
    return path.join(this.dir, "artifacts");
  }

  /** Appends one entry with one synchronous write; once this returns, a SIGKILL cannot lose it. */
  append(kind: LedgerKind, data: Record<string, unknown>, agent?: string): LedgerEntry {
    const entry = this.#ledger.append(kind, data, agent);
    // The process that records a resume owns the run from now on (so `qaas runs` says `running`).
    if (kind === "run_resumed") this.claim();
    return entry;
  }

  readLedger(): LedgerRead {
    return this.#ledger.read();
  }

  /** The ledger's whole lines from byte `offset` on (see LedgerFile.readFrom). */
  readLedgerFrom(offset: number): { entries: LedgerEntry[]; offset: number } {
    return this.#ledger.readFrom(offset);
  }

  meta(): RunMeta | undefined {
    const file = path.join(this.dir, META_FILE);
    if (!fs.existsSync(file)) return undefined;
    try {
      return JSON.parse(fs.readFileSync(file, "utf8")) as RunMeta;
    } catch {
      return undefined;
    }
  }

  /** Marks this process as the run's owner; appending `run_resumed` does it for you. */
  claim(): void {
    const meta = this.meta();
    const next: RunMeta = {
      id: this.runId,
      mode: meta?.mode ?? "?",
      target: meta?.target ?? "?",
      created_at: meta?.created_at ?? new Date().toISOString(),
      pid: process.pid,
      host: os.hostname(),
    };
    writeFileAtomic(path.join(this.dir, META_FILE), `${JSON.stringify(next, null, 2)}\n`);
  }

  summary(): RunSummary {
    const meta = this.meta();
    try {
      return summarizeRun(this.runId, meta, this.readLedger().entries);
    } catch (error) {
      if (!(error instanceof QaasError)) throw error;
      return { ...summarizeRun(this.runId, meta, []), status: "corrupt" };
    }
  }

  writeEnvelope(envelope: DefectEnvelope): string {
    const validation = validateEnvelope(envelope);
    if (!validation.ok) {
      const problems = validation.errors.map((error) => `${error.path}: ${error.message}`).join("; ");
      throw new QaasError("ENVELOPE_INVALID", `envelope "${envelope.id}" of run ${this.runId}: ${problems}`);
    }
    if (!SAFE_NAME.test(envelope.id)) {
      throw new QaasError(
        "ENVELOPE_ID_INVALID",
        `envelope id "${envelope.id}" must be letters, digits, ".", "_" or "-" (it becomes a file name)`,
      );
    }
    const file = path.join(this.envelopesDir, `${envelope.id}.json`);
    writeFileAtomic(file, `${JSON.stringify(validation.envelope, null, 2)}\n`);
    return file;
  }

  readEnvelope(id: string): DefectEnvelope | undefined {
    if (!SAFE_NAME.test(id)) return undefined;
    const file = path.join(this.envelopesDir, `${id}.json`);
    return fs.existsSync(file) ? readEnvelopeFile(file) : undefined;
  }

  /** Every envelope of the run, oldest discovery first (ties by id), so listings are stable. */
  readEnvelopes(): DefectEnvelope[] {
    if (!fs.existsSync(this.envelopesDir)) return [];
    return fs
      .readdirSync(this.envelopesDir)
      .filter((name) => name.endsWith(".json") && !isTemporaryFile(name))
      .map((name) => readEnvelopeFile(path.join(this.envelopesDir, name)))
      .sort(
        (left, right) =>
          Date.parse(left.discovered_at) - Date.parse(right.discovered_at) || left.id.localeCompare(right.id),
      );
  }

  /** Writes `artifacts/<name>` (subfolders allowed) and answers `artifact://<run>/<name>`. */
  putArtifact(name: string, content: string | Uint8Array): string {
    const uri = artifactUri(this.runId, name);
    const file = path.join(this.artifactsDir, ...artifactNameSegments(name));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    assertWritableInside(this.artifactsDir, file, uri);
    writeFileAtomic(file, content);
    return uri;
  }

  /** Absolute path of an artifact of this run (or another run of the same store); refuses escapes. */
  resolveArtifact(uri: string): string {
    return resolveArtifactUri(this.home, uri);
  }

  writeReport(report: unknown): string {
    const file = path.join(this.dir, REPORT_FILE);
    writeFileAtomic(file, `${JSON.stringify(report, null, 2)}\n`);
    return file;
  }

  readReport(): unknown | undefined {
    const file = path.join(this.dir, REPORT_FILE);
    if (!fs.existsSync(file)) return undefined;
    try {
      return JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (error) {
      throw new QaasError(
        "REPORT_INVALID",
        `${file} is not valid JSON (${error instanceof Error ? error.message : String(error)}); re-run \`qaas report ${this.runId}\``,
      );
    }
  }
}

/** `20261129-204501-ab12`: UTC time first so ids sort by creation, a random suffix so they never clash. */
export function newRunId(now: Date = new Date()): string {
  const iso = now.toISOString();
  const date = iso.slice(0, 10).replaceAll("-", "");
  const time = iso.slice(11, 19).replaceAll(":", "");
  return `${date}-${time}-${randomBytes(2).toString("hex")}`;
}

function assertRunId(runId: string): void {
  if (!SAFE_NAME.test(runId) || runId.length > 100) {
    throw new QaasError(
      "RUN_ID_INVALID",
      `run id "${runId}" must start with a letter or digit and hold only letters, digits, ".", "_" or "-"`,
    );
  }
}

function readEnvelopeFile(file: string): DefectEnvelope {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    throw new QaasError(
      "ENVELOPE_INVALID",
      `${file} is not valid JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  const validation = validateEnvelope(value);
  if (!validation.ok) {
    const problems = validation.errors.map((error) => `${error.path}: ${error.message}`).join("; ");
    throw new QaasError("ENVELOPE_INVALID", `${file}: ${problems}`);
  }
  return validation.envelope;
}
