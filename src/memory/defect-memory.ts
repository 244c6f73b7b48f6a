import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { QaasError } from "../errors.ts";
import { similarityScore } from "./similarity.ts";

// What qaas remembers across runs (`<home>/memory.db`): every fingerprint seen, in which runs, and the
// ticket filed for it. SQLite in WAL mode with a busy timeout, so several runs (processes) can record at
// once; each record is one immediate transaction, so counts stay exact under concurrency.

export const MEMORY_SCHEMA_VERSION = 1;
const MEMORY_FILE = "memory.db";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS fingerprints (
  fingerprint TEXT PRIMARY KEY,
  domain TEXT NOT NULL,
  defect_class TEXT NOT NULL,
  location_kind TEXT NOT NULL,
  location_value TEXT NOT NULL,
  title TEXT NOT NULL,
  first_run TEXT NOT NULL,
  last_run TEXT NOT NULL,
  occurrences INTEGER NOT NULL,
  first_seen_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS occurrences (
  fingerprint TEXT NOT NULL REFERENCES fingerprints(fingerprint) DEFERRABLE INITIALLY DEFERRED,
  run_id TEXT NOT NULL,
  envelope_id TEXT NOT NULL,
  at TEXT NOT NULL,
  PRIMARY KEY (fingerprint, run_id)
);
CREATE TABLE IF NOT EXISTS tickets (
  fingerprint TEXT NOT NULL,
  tracker TEXT NOT NULL,
  key TEXT NOT NULL,
  url TEXT,
  state TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (fingerprint, tracker)
);
`;

export interface MemoryLocation {
  kind: string;
  value: string;
}

export interface RecordInput {
  fingerprint: string;
  runId: string;
  envelopeId: string;
  title: string;
  domain: string;
  defectClass: string;
  location: MemoryLocation;
}

export interface RecordResult {
  /** True when this fingerprint was first seen in this run (asking twice in one run answers the same). */
  firstSeen: boolean;
  /** Distinct runs the fingerprint has been seen in. */
  occurrences: number;
}

export interface FingerprintRecord {
  fingerprint: string;
  domain: string;
  defectClass: string;
  location: MemoryLocation;
  title: string;
  firstRun: string;
  lastRun: string;
  occurrences: number;
  firstSeenAt: string;
  lastSeenAt: string;
}

export interface Occurrence {
  runId: string;
  envelopeId: string;
  at: string;
}

export interface Ticket {
  tracker: string;
  key: string;
  url: string | null;
  state: string;
}

export interface SimilarFinding {
  fingerprint: string;
  title: string;
  location: MemoryLocation;
  score: number;
}

export interface FingerprintRow {
  fingerprint: string;
  domain: string;
  defect_class: string;
  location_kind: string;
  location_value: string;
  title: string;
  first_run: string;
  last_run: string;
  occurrences: number;
  first_seen_at: string;
  last_seen_at: string;
}

export class DefectMemory {
  readonly #database: Database.Database;
  readonly #record: (input: RecordInput) => RecordResult;

  private constructor(
    database: Database.Database,
    readonly file: string,
  ) {
    this.#database = database;
    const insertOccurrence = database.prepare(
      "INSERT OR IGNORE INTO occurrences (fingerprint, run_id, envelope_id, at) VALUES (?, ?, ?, ?)",
    );
    const insertFingerprint = database.prepare(
      `INSERT INTO fingerprints (fingerprint, domain, defect_class, location_kind, location_value, title,
         first_run, last_run, occurrences, first_seen_at, last_seen_at)
       VALUES (@fingerprint, @domain, @defectClass, @kind, @value, @title, @runId, @runId, 1, @at, @at)
       ON CONFLICT (fingerprint) DO UPDATE SET
         occurrences = occurrences + 1, last_run = excluded.last_run, last_seen_at = excluded.last_seen_at`,
    );
    const select = database.prepare<[string], FingerprintRow>(
      "SELECT * FROM fingerprints WHERE fingerprint = ?",
    );
    // The occurrence row is the guard: a (fingerprint, run) pair seen again inserts nothing, so it counts once.
    const record = database.transaction((input: RecordInput): RecordResult => {
      const at = new Date().toISOString();
      const inserted =
        insertOccurrence.run(input.fingerprint, input.runId, input.envelopeId, at).changes === 1;
      if (inserted) {
        insertFingerprint.run({
          fingerprint: input.fingerprint,
          domain: input.domain,
          defectClass: input.defectClass,
          kind: input.location.kind,
          value: input.location.value,
          title: input.title,
          runId: input.runId,
          at,
        });
      }
      const row = select.get(input.fingerprint);
      if (!row) throw new Error(`fingerprint ${input.fingerprint} vanished inside its own transaction`);
      return { firstSeen: row.first_run === input.runId, occurrences: row.occurrences };
    });
    // IMMEDIATE takes the write lock up front, so two writers queue on busy_timeout instead of deadlocking.
    this.#record = (input) => record.immediate(input);
  }

  static open(home: string): DefectMemory {
    fs.mkdirSync(home, { recursive: true });
    const file = path.join(home, MEMORY_FILE);
    const database = new Database(file);
    try {
      database.pragma("busy_timeout = 5000");
      enableWriteAheadLog(database);
      database.pragma("synchronous = NORMAL");
      database.pragma("foreign_keys = ON");
      migrate(database, file);
    } catch (error) {
      database.close();
      throw error;
    }
    return new DefectMemory(database, file);
  }

  record(input: RecordInput): RecordResult {
    for (const key of ["fingerprint", "runId", "envelopeId", "title", "domain", "defectClass"] as const) {
      if (typeof input[key] !== "string" || input[key] === "") {
        throw new QaasError(
          "MEMORY_RECORD_INVALID",
          `defect memory record: ${key} must be a non-empty string`,
        );
      }
    }
    if (typeof input.location?.kind !== "string" || typeof input.location.value !== "string") {
      throw new QaasError("MEMORY_RECORD_INVALID", "defect memory record: location needs a kind and a value");
    }
    return this.#record(input);
  }

  get(fingerprint: string): FingerprintRecord | undefined {
    const row = this.#database
      .prepare<[string], FingerprintRow>("SELECT * FROM fingerprints WHERE fingerprint = ?")
      .get(fingerprint);
    return row ? toRecord(row) : undefined;
  }

  /** The runs a fingerprint was seen in, oldest first. */
  occurrences(fingerprint: string): Occurrence[] {
    return this.#database
      .prepare<[string], Occurrence>(
        "SELECT run_id AS runId, envelope_id AS envelopeId, at FROM occurrences WHERE fingerprint = ? ORDER BY at, run_id",
      )
      .all(fingerprint);
  }

  /** Remembered findings most like the query, best first; only those sharing something score above 0. */
  searchSimilar(query: {
    title: string;
    location?: MemoryLocation;
    domain?: string;
    limit?: number;
  }): SimilarFinding[] {
    const rows = this.#database
      .prepare<[], FingerprintRow>("SELECT * FROM fingerprints")
      .all()
      .map((row) => {
        const location = { kind: row.location_kind, value: row.location_value };
        const score = similarityScore(query, { title: row.title, location, domain: row.domain });
        return { fingerprint: row.fingerprint, title: row.title, location, score };
      })
      .filter((candidate) => candidate.score > 0);
    rows.sort((left, right) => right.score - left.score || left.fingerprint.localeCompare(right.fingerprint));
    return rows.slice(0, query.limit ?? 5);
  }

  /** Remembers the ticket of a fingerprint in one tracker (a later call updates key, url and state). */
  recordTicket(fingerprint: string, ticket: Ticket): void {
    this.#database
      .prepare(
        `INSERT INTO tickets (fingerprint, tracker, key, url, state, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (fingerprint, tracker) DO UPDATE SET
           key = excluded.key, url = excluded.url, state = excluded.state, updated_at = excluded.updated_at`,
      )
      .run(fingerprint, ticket.tracker, ticket.key, ticket.url, ticket.state, new Date().toISOString());
  }

  /** The most recently recorded ticket of a fingerprint (in one tracker, when named). */
  ticketFor(fingerprint: string, tracker?: string): Ticket | undefined {
    const row = this.#database
      .prepare<[string, string | null, string | null], Ticket>(
        `SELECT tracker, key, url, state FROM tickets
         WHERE fingerprint = ? AND (? IS NULL OR tracker = ?)
         ORDER BY updated_at DESC LIMIT 1`,
      )
      .get(fingerprint, tracker ?? null, tracker ?? null);
    return row;
  }

  /**
   * Replaces everything remembered with `snapshot` in one transaction: a queue worker's private copy of
   * the memory the queue's PostgreSQL keeps for every machine (src/queue/shared-memory.ts).
   */
  replaceAll(snapshot: MemorySnapshot): void {
    const database = this.#database;
    const insertFingerprint = database.prepare(
      `INSERT INTO fingerprints (fingerprint, domain, defect_class, location_kind, location_value, title,
         first_run, last_run, occurrences, first_seen_at, last_seen_at)
       VALUES (@fingerprint, @domain, @defect_class, @location_kind, @location_value, @title,
         @first_run, @last_run, @occurrences, @first_seen_at, @last_seen_at)`,
    );
    const insertOccurrence = database.prepare(
      "INSERT INTO occurrences (fingerprint, run_id, envelope_id, at) VALUES (@fingerprint, @run_id, @envelope_id, @at)",
    );
    const insertTicket = database.prepare(
      `INSERT INTO tickets (fingerprint, tracker, key, url, state, updated_at)
       VALUES (@fingerprint, @tracker, @key, @url, @state, @updated_at)`,
    );
    database
      .transaction(() => {
        database.exec("DELETE FROM occurrences; DELETE FROM tickets; DELETE FROM fingerprints;");
        for (const row of snapshot.fingerprints) insertFingerprint.run(row);
        for (const row of snapshot.occurrences) insertOccurrence.run(row);
        for (const row of snapshot.tickets) insertTicket.run(row);
      })
      .immediate();
  }

  close(): void {
    if (this.#database.open) this.#database.close();
  }
}

/** Every row of a memory, as its tables hold them. */
export interface MemorySnapshot {
  fingerprints: FingerprintRow[];
  occurrences: { fingerprint: string; run_id: string; envelope_id: string; at: string }[];
  tickets: {
    fingerprint: string;
    tracker: string;
    key: string;
    url: string | null;
    state: string;
    updated_at: string;
  }[];
}

function toRecord(row: FingerprintRow): FingerprintRecord {
  return {
    fingerprint: row.fingerprint,
    domain: row.domain,
    defectClass: row.defect_class,
    location: { kind: row.location_kind, value: row.location_value },
    title: row.title,
    firstRun: row.first_run,
    lastRun: row.last_run,
    occurrences: row.occurrences,
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
  };
}

function enableWriteAheadLog(database: Database.Database): void {
  // Switching a new file to WAL needs a moment of exclusive access; two processes opening a fresh
  // database at once can collide here before busy_timeout applies, so retry briefly.
  for (let attempt = 0; ; attempt += 1) {
    try {
      database.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY" || attempt >= 50) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

function migrate(database: Database.Database, file: string): void {
  const version = database.pragma("user_version", { simple: true }) as number;
  if (version > MEMORY_SCHEMA_VERSION) {
    throw new QaasError(
      "MEMORY_SCHEMA_NEWER",
      `${file} has schema version ${version}, newer than this qaas understands (${MEMORY_SCHEMA_VERSION}); upgrade qaas or point --home elsewhere`,
    );
  }
  if (version === MEMORY_SCHEMA_VERSION) return;
  database
    .transaction(() => {
      database.exec(SCHEMA);
      database.pragma(`user_version = ${MEMORY_SCHEMA_VERSION}`);
    })
    .immediate();
}
