import type { SqlRunner } from "./shared-runs.ts";

// Work a run does once for all its agents (one reset of the target's data before a phase's tests), when
// those agents run on several workers: the first to claim the key in the queue's PostgreSQL does it, the
// others wait for its answer and share it. A claim whose holder died mid-work goes stale and is taken over.

export const SHARED_ONCE_SCHEMA = `
CREATE TABLE IF NOT EXISTS qaas_run_once (
  run_id text NOT NULL,
  key text NOT NULL,
  claimed_by text NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  done_at timestamptz,
  answer jsonb,
  PRIMARY KEY (run_id, key)
);`;

const POLL_MS = 200;

export interface OnceOptions {
  runId: string;
  key: string;
  claimedBy: string;
  /** How long a claim may go unanswered before another process takes the work over. */
  staleAfterMs: number;
  signal?: AbortSignal;
  pollMs?: number;
}

/** Runs `work` if no process of the run has claimed `key`, else waits for the answer of the one that did. */
export async function runOnceShared<T>(
  sql: SqlRunner,
  options: OnceOptions,
  work: () => Promise<T>,
): Promise<T> {
  const { runId, key, claimedBy } = options;
  const claimed = await sql(
    `INSERT INTO qaas_run_once (run_id, key, claimed_by) VALUES ($1, $2, $3)
     ON CONFLICT (run_id, key) DO NOTHING RETURNING key`,
    [runId, key, claimedBy],
  );
  if (claimed.length > 0) return doWork(sql, options, work);
  for (;;) {
    if (options.signal?.aborted) throw new Error(`stopped while waiting for "${key}" to be done once`);
    const [row] = await sql<{ done: boolean; answer: T; stale: boolean }>(
      `SELECT done_at IS NOT NULL AS done, answer,
              claimed_at < clock_timestamp() - make_interval(secs => $3::float8 / 1000) AS stale
       FROM qaas_run_once WHERE run_id = $1 AND key = $2`,
      [runId, key, options.staleAfterMs],
    );
    // Gone: its holder's work failed and released the claim, so this process tries in its turn.
    if (!row) return runOnceShared(sql, options, work);
    if (row.done) return row.answer;
    if (row.stale) {
      const taken = await sql(
        `UPDATE qaas_run_once SET claimed_by = $3, claimed_at = clock_timestamp()
         WHERE run_id = $1 AND key = $2 AND done_at IS NULL
           AND claimed_at < clock_timestamp() - make_interval(secs => $4::float8 / 1000)
         RETURNING key`,
        [runId, key, claimedBy, options.staleAfterMs],
      );
      if (taken.length > 0) return doWork(sql, options, work);
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? POLL_MS));
  }
}

async function doWork<T>(sql: SqlRunner, options: OnceOptions, work: () => Promise<T>): Promise<T> {
  let answer: T;
  try {
    answer = await work();
  } catch (error) {
    // Nothing to share: the claim is released, and whoever waits tries the work itself.
    await sql("DELETE FROM qaas_run_once WHERE run_id = $1 AND key = $2 AND claimed_by = $3", [
      options.runId,
      options.key,
      options.claimedBy,
    ]);
    throw error;
  }
  await sql(
    "UPDATE qaas_run_once SET done_at = clock_timestamp(), answer = $4::jsonb WHERE run_id = $1 AND key = $2 AND claimed_by = $3",
    [options.runId, options.key, options.claimedBy, JSON.stringify(answer ?? null)],
  );
  return answer;
}
