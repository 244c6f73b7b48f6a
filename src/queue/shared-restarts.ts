import type { SqlRunner } from "./shared-runs.ts";

// A managed target is started, restarted and stopped by the run's coordinator, the process that holds its
// server. In queue mode the requests that kill it are sent by workers, perhaps on other machines: a worker
// whose liveness watch finds the target dead asks for a restart through the queue's PostgreSQL and waits;
// the coordinator serves the run's requests, one restart for all that were waiting, and answers each.
// A request made before the latest restart finished was about the server that restart replaced: it is
// answered without killing the fresh one.

export const SHARED_RESTARTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS qaas_target_restart (
  id bigserial PRIMARY KEY,
  run_id text NOT NULL,
  requested_by text NOT NULL,
  requested_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  done_at timestamptz,
  error text
);
CREATE INDEX IF NOT EXISTS qaas_target_restart_waiting ON qaas_target_restart (run_id) WHERE done_at IS NULL;`;

const POLL_MS = 200;
/** A restart not answered by then is given up: the coordinator may be gone, its successor starts anew. */
const ANSWER_TIMEOUT_MS = 90_000;

export interface RestartRequestOptions {
  runId: string;
  requestedBy: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Asks the run's coordinator to restart the target; resolves once it has, throws when it could not. */
export async function requestTargetRestart(sql: SqlRunner, options: RestartRequestOptions): Promise<void> {
  const [row] = await sql<{ id: string }>(
    "INSERT INTO qaas_target_restart (run_id, requested_by) VALUES ($1, $2) RETURNING id",
    [options.runId, options.requestedBy],
  );
  const deadline = Date.now() + (options.timeoutMs ?? ANSWER_TIMEOUT_MS);
  while (Date.now() < deadline && !options.signal?.aborted) {
    const [answer] = await sql<{ done: boolean; error: string | null }>(
      "SELECT done_at IS NOT NULL AS done, error FROM qaas_target_restart WHERE id = $1",
      [row?.id],
    );
    if (answer?.done) {
      if (answer.error) throw new Error(`the coordinator could not restart the target: ${answer.error}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error("the run's coordinator did not restart the target in time");
}

export interface RestartServer {
  stop(): Promise<void>;
}

/** Serves the run's restart requests with `restart` until stopped. */
export function serveTargetRestarts(
  sql: SqlRunner,
  runId: string,
  restart: () => Promise<void>,
  pollMs = POLL_MS,
): RestartServer {
  let lastFinished: Date | undefined;
  let serving: Promise<void> = Promise.resolve();
  const serveWaiting = async () => {
    const waiting = await sql<{ id: string; requested_at: Date }>(
      "SELECT id, requested_at FROM qaas_target_restart WHERE run_id = $1 AND done_at IS NULL ORDER BY id",
      [runId],
    );
    if (waiting.length === 0) return;
    const stale = waiting.filter((request) => lastFinished && request.requested_at < lastFinished);
    const fresh = waiting.filter((request) => !stale.includes(request));
    await answer(stale, null);
    if (fresh.length === 0) return;
    let error: string | null = null;
    try {
      await restart();
    } catch (cause) {
      error = cause instanceof Error ? cause.message : String(cause);
    }
    lastFinished = (await sql<{ now: Date }>("SELECT clock_timestamp() AS now", []))[0]?.now;
    await answer(fresh, error);
  };
  const answer = async (requests: { id: string }[], error: string | null) => {
    if (requests.length === 0) return;
    await sql("UPDATE qaas_target_restart SET done_at = clock_timestamp(), error = $2 WHERE id = ANY($1)", [
      requests.map((request) => request.id),
      error,
    ]);
  };
  const timer = setInterval(() => {
    // One pass at a time; a failed pass (the database away for a moment) is tried again on the next tick.
    serving = serving.then(serveWaiting).catch(() => {});
  }, pollMs);
  return {
    async stop() {
      clearInterval(timer);
      await serving;
    },
  };
}
