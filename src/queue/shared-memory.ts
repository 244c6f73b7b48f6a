import type { DefectMemory, FingerprintRow, MemorySnapshot, RecordInput } from "../memory/defect-memory.ts";
import type { SqlRunner } from "./shared-runs.ts";

// Queue mode's defect memory lives in the queue's PostgreSQL, the same three tables as the SQLite one.
// A worker reads a private copy, refreshed before each job, and hands the fingerprints it recorded back
// with the job's result; the coordinator applies them here once, when it applies the result. So a killed
// worker's records vanish with its try, and a retried job never counts a fingerprint twice.

export const SHARED_MEMORY_SCHEMA = `
CREATE TABLE IF NOT EXISTS qaas_memory_fingerprint (
  fingerprint text PRIMARY KEY,
  domain text NOT NULL,
  defect_class text NOT NULL,
  location_kind text NOT NULL,
  location_value text NOT NULL,
  title text NOT NULL,
  first_run text NOT NULL,
  last_run text NOT NULL,
  occurrences integer NOT NULL,
  first_seen_at text NOT NULL,
  last_seen_at text NOT NULL
);
CREATE TABLE IF NOT EXISTS qaas_memory_occurrence (
  fingerprint text NOT NULL,
  run_id text NOT NULL,
  envelope_id text NOT NULL,
  at text NOT NULL,
  PRIMARY KEY (fingerprint, run_id)
);
CREATE TABLE IF NOT EXISTS qaas_memory_ticket (
  fingerprint text NOT NULL,
  tracker text NOT NULL,
  key text NOT NULL,
  url text,
  state text NOT NULL,
  updated_at text NOT NULL,
  PRIMARY KEY (fingerprint, tracker)
);`;

/**
 * Records fingerprints as DefectMemory.record does: the occurrence row is the guard, so a (fingerprint,
 * run) pair counts once however often it is applied. One statement each, so each is atomic.
 */
export async function applyMemoryRecords(sql: SqlRunner, records: readonly RecordInput[]): Promise<void> {
  for (const record of records) {
    const at = new Date().toISOString();
    await sql(
      `WITH seen AS (
         INSERT INTO qaas_memory_occurrence (fingerprint, run_id, envelope_id, at) VALUES ($1, $2, $3, $4)
         ON CONFLICT DO NOTHING RETURNING fingerprint
       )
       INSERT INTO qaas_memory_fingerprint (fingerprint, domain, defect_class, location_kind, location_value,
         title, first_run, last_run, occurrences, first_seen_at, last_seen_at)
       SELECT $1, $5, $6, $7, $8, $9, $2, $2, 1, $4, $4 FROM seen
       ON CONFLICT (fingerprint) DO UPDATE SET occurrences = qaas_memory_fingerprint.occurrences + 1,
         last_run = excluded.last_run, last_seen_at = excluded.last_seen_at`,
      [
        record.fingerprint,
        record.runId,
        record.envelopeId,
        at,
        record.domain,
        record.defectClass,
        record.location.kind,
        record.location.value,
        record.title,
      ],
    );
  }
}

/** Replaces a local memory's contents with the shared one. */
export async function copySharedMemory(sql: SqlRunner, memory: DefectMemory): Promise<void> {
  const snapshot: MemorySnapshot = {
    fingerprints: await sql<FingerprintRow>("SELECT * FROM qaas_memory_fingerprint", []),
    occurrences: await sql<MemorySnapshot["occurrences"][number]>(
      "SELECT fingerprint, run_id, envelope_id, at FROM qaas_memory_occurrence",
      [],
    ),
    tickets: await sql<MemorySnapshot["tickets"][number]>(
      "SELECT fingerprint, tracker, key, url, state, updated_at FROM qaas_memory_ticket",
      [],
    ),
  };
  memory.replaceAll(snapshot);
}
