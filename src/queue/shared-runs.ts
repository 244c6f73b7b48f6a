import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { QaasError } from "../errors.ts";
import { SAFE_NAME } from "../store/artifacts.ts";
import { writeFileAtomic } from "../store/atomic-write.ts";
import { LEDGER_FILE, type RunStore } from "../store/run-store.ts";

// Queue mode keeps every run in the queue's PostgreSQL as well as in the coordinator's folder, so that
// any machine can read it (`qaas runs/show/score/report --queue`) and a coordinator on another machine
// can take a run over. The coordinator's folder stays the run's working copy (its writes are synchronous
// and crash-only); after each step it publishes what changed: ledger entries by sequence number, and the
// files its readers use (run.json, report.json, the pinned map, envelopes) by content. A reader
// materializes runs into a folder of its own and reads them with the same code as a local run.

/** Runs one statement; JobQueue.sql and a plain pg client both fit. */
export type SqlRunner = <Row>(text: string, values: unknown[]) => Promise<Row[]>;

export const SHARED_RUNS_SCHEMA = `
CREATE TABLE IF NOT EXISTS qaas_run_entry (
  run_id text NOT NULL,
  seq integer NOT NULL,
  line text NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS qaas_run_file (
  run_id text NOT NULL,
  name text NOT NULL,
  content text NOT NULL,
  digest text NOT NULL,
  PRIMARY KEY (run_id, name)
);`;

/** The files of a run folder that readers use; the ledger travels entry by entry, artifacts elsewhere. */
const TOP_LEVEL_FILES = new Set(["run.json", "report.json", "pinned-map.json"]);
const FILE_NAME = /^(?:envelopes\/)?[A-Za-z0-9][A-Za-z0-9._-]*\.json$/;
/** Enough of a ledger's end to hold its last entry (entries stay well below this). */
const LEDGER_TAIL_BYTES = 1024 * 1024;

/** Publishes one run's changes; pushes are serialized, so concurrent callers never interleave. */
export class RunPublisher {
  #pushedSeq: number | undefined;
  /** Where the ledger was read up to, so each push parses only the lines written since. */
  #ledgerOffset = 0;
  readonly #pushedDigests = new Map<string, string>();
  /** Each file's size and modification time when last pushed: an unchanged file is not read again. */
  readonly #pushedStats = new Map<string, string>();
  #last: Promise<void> = Promise.resolve();

  constructor(
    private readonly sql: SqlRunner,
    private readonly store: RunStore,
  ) {}

  push(): Promise<void> {
    const next = this.#last.then(() => this.#push());
    // A failed push leaves the next one to send the same changes again.
    this.#last = next.catch(() => {});
    return next;
  }

  async #push(): Promise<void> {
    const runId = this.store.runId;
    if (this.#pushedSeq === undefined) {
      const [row] = await this.sql<{ seq: number | null }>(
        "SELECT max(seq) AS seq FROM qaas_run_entry WHERE run_id = $1",
        [runId],
      );
      this.#pushedSeq = row?.seq ?? 0;
    }
    const read = this.store.readLedgerFrom(this.#ledgerOffset);
    const entries = read.entries.filter((entry) => entry.seq > (this.#pushedSeq ?? 0));
    if (entries.length > 0) {
      await this.sql(
        `INSERT INTO qaas_run_entry (run_id, seq, line)
         SELECT $1, * FROM unnest($2::integer[], $3::text[]) ON CONFLICT DO NOTHING`,
        [runId, entries.map((entry) => entry.seq), entries.map((entry) => JSON.stringify(entry))],
      );
      this.#pushedSeq = entries.at(-1)?.seq ?? this.#pushedSeq;
    }
    this.#ledgerOffset = read.offset;
    const changed = runFiles(this.store.dir)
      .map(({ name, file }) => ({ name, file, stat: statOf(file) }))
      .filter((item) => item.stat !== this.#pushedStats.get(item.name))
      .map(({ name, file, stat }) => ({ name, stat, content: fs.readFileSync(file, "utf8") }))
      .map((item) => ({ ...item, digest: digestOf(item.content) }))
      .filter((item) => {
        if (this.#pushedDigests.get(item.name) !== item.digest) return true;
        this.#pushedStats.set(item.name, item.stat);
        return false;
      });
    if (changed.length === 0) return;
    await this.sql(
      `INSERT INTO qaas_run_file (run_id, name, content, digest)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[])
       ON CONFLICT (run_id, name) DO UPDATE SET content = excluded.content, digest = excluded.digest`,
      [
        runId,
        changed.map((item) => item.name),
        changed.map((item) => item.content),
        changed.map((item) => item.digest),
      ],
    );
    for (const item of changed) {
      this.#pushedDigests.set(item.name, item.digest);
      this.#pushedStats.set(item.name, item.stat);
    }
  }
}

/** Every run published to the queue's store, by id. */
export async function sharedRunIds(sql: SqlRunner): Promise<string[]> {
  const rows = await sql<{ run_id: string }>(
    "SELECT DISTINCT run_id FROM qaas_run_file WHERE name = 'run.json' ORDER BY run_id",
    [],
  );
  return rows.map((row) => row.run_id);
}

/**
 * Writes a published run into `home` as a run folder, or brings a copy there up to date: the ledger entries
 * it lacks are appended, the files whose content differs are replaced. A local copy that already holds as
 * many ledger entries or more is left as it is: it is this machine's own, at least as far along. Answers
 * whether the run was written.
 */
export async function materializeRun(sql: SqlRunner, home: string, runId: string): Promise<boolean> {
  if (!SAFE_NAME.test(runId)) {
    throw new QaasError("RUN_ID_INVALID", `the queue's store names a run "${runId}", which is not a run id`);
  }
  const dir = path.join(home, "runs", runId);
  const [count] = await sql<{ entries: number }>(
    "SELECT count(*)::integer AS entries FROM qaas_run_entry WHERE run_id = $1",
    [runId],
  );
  const last = fs.existsSync(path.join(dir, "run.json")) ? lastEntry(path.join(dir, LEDGER_FILE)) : undefined;
  if (last !== undefined && last.seq >= (count?.entries ?? 0)) return false;
  // The copy is extended only if it is a prefix of the published ledger; one that went its own way (written
  // by a coordinator that died before publishing it all) is replaced.
  const [shared] = last
    ? await sql<{ line: string }>("SELECT line FROM qaas_run_entry WHERE run_id = $1 AND seq = $2", [
        runId,
        last.seq,
      ])
    : [];
  // A copy ending in a cut line is written anew too: appending after that line would bury it mid-file.
  const copy = last !== undefined && !last.cut && shared?.line === last.line ? last.seq : undefined;
  const digests = await sql<{ name: string; digest: string }>(
    "SELECT name, digest FROM qaas_run_file WHERE run_id = $1 ORDER BY name",
    [runId],
  );
  if (digests.length === 0) return false;
  for (const { name } of digests) {
    if (!FILE_NAME.test(name)) {
      throw new QaasError(
        "SHARED_RUN_INVALID",
        `run ${runId} in the queue's store holds a file named "${name}", which no run folder has`,
      );
    }
  }
  const stale = digests
    .filter(({ name, digest }) => localDigest(path.join(dir, name)) !== digest)
    .map(({ name }) => name);
  const files = await sql<{ name: string; content: string }>(
    "SELECT name, content FROM qaas_run_file WHERE run_id = $1 AND name = ANY($2::text[])",
    [runId, stale],
  );
  const lines = await sql<{ line: string }>(
    "SELECT line FROM qaas_run_entry WHERE run_id = $1 AND seq > $2 ORDER BY seq",
    [runId, copy ?? 0],
  );
  for (const folder of ["envelopes", "artifacts"]) fs.mkdirSync(path.join(dir, folder), { recursive: true });
  for (const { name, content } of files) writeFileAtomic(path.join(dir, name), content);
  const text = lines.map((row) => `${row.line}\n`).join("");
  // Appended whole or written anew: a crash leaves either the old copy or a cut last line, which the next
  // read drops and the next materialization fetches again.
  if (copy === undefined) writeFileAtomic(path.join(dir, LEDGER_FILE), text);
  else fs.appendFileSync(path.join(dir, LEDGER_FILE), text);
  return true;
}

/** Materializes every published run into `home`; answers their ids. */
export async function materializeRuns(sql: SqlRunner, home: string): Promise<string[]> {
  const ids = await sharedRunIds(sql);
  for (const id of ids) await materializeRun(sql, home, id);
  return ids;
}

function runFiles(dir: string): { name: string; file: string }[] {
  const top = fs
    .readdirSync(dir)
    .filter((name) => TOP_LEVEL_FILES.has(name))
    .map((name) => ({ name, file: path.join(dir, name) }));
  const envelopesDir = path.join(dir, "envelopes");
  const envelopes = fs.existsSync(envelopesDir)
    ? fs
        .readdirSync(envelopesDir)
        .filter((name) => FILE_NAME.test(`envelopes/${name}`))
        .map((name) => ({ name: `envelopes/${name}`, file: path.join(envelopesDir, name) }))
    : [];
  return [...top, ...envelopes];
}

/**
 * The last whole entry of a ledger copy, as its line and sequence number (entries are numbered from 1
 * without gaps), and whether a cut line follows it; undefined when there is no copy, or its end cannot be
 * read as one.
 */
function lastEntry(file: string): { seq: number; line: string; cut: boolean } | undefined {
  let descriptor: number;
  try {
    descriptor = fs.openSync(file, "r");
  } catch {
    return undefined;
  }
  try {
    const size = fs.fstatSync(descriptor).size;
    if (size === 0) return undefined;
    const length = Math.min(size, LEDGER_TAIL_BYTES);
    const tail = Buffer.alloc(length);
    fs.readSync(descriptor, tail, 0, length, size - length);
    // A last line cut by a crash is not an entry: the one before it is the copy's last.
    const end = tail.lastIndexOf(0x0a);
    if (end < 0) return undefined;
    const line = tail.subarray(0, end).toString("utf8").split("\n").at(-1) ?? "";
    const seq = (JSON.parse(line) as { seq?: unknown }).seq;
    const cut = end !== tail.length - 1;
    return typeof seq === "number" && Number.isInteger(seq) ? { seq, line, cut } : undefined;
  } catch {
    return undefined;
  } finally {
    fs.closeSync(descriptor);
  }
}

function localDigest(file: string): string | undefined {
  try {
    return digestOf(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

function statOf(file: string): string {
  const stat = fs.statSync(file);
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
}

function digestOf(content: string): string {
  return createHash("sha256").update(content).digest("hex");
}
