import { renderTable } from "../cli/text-table.ts";
import { slotScope } from "./fleet-limits.ts";
import { DEAD_LETTER_QUEUE, INVOCATION_QUEUE } from "./invocation-job.ts";
import type { JobQueue } from "./job-queue.ts";
import { describeQueueUrl } from "./queue-url.ts";

// `qaas queue status`: what an operator needs to see at a glance — jobs by state, which workers are
// alive, the oldest job still waiting (a queue nobody drains), and how loaded each target is.

export interface QueueStatus {
  queue: string;
  jobs: Record<string, number>;
  dead_lettered: number;
  workers: Array<{ id: string; host: string; pid: number; seen_at: string; current_job: string | null }>;
  oldest_waiting: {
    job: string;
    run_id: string;
    agent: string;
    created_at: string;
    waiting_seconds: number;
  } | null;
  targets: Array<{ target: string; active: number; waiting: number }>;
  /** The limits held on each service now (by origin): invocations on it, one alone or not, requests in flight. */
  holds: Array<{ target: string; invocations: number; exclusive: boolean; in_flight: number; cap: number }>;
}

const STATES = ["created", "retry", "active", "completed", "cancelled", "failed"] as const;

/** A worker counts as alive if it said so within this many seconds (it does between every job and beat). */
export const WORKER_ALIVE_SECONDS = 90;

export async function queueStatus(queue: JobQueue): Promise<QueueStatus> {
  const states = await queue.sql<{ state: string; count: string }>(
    "SELECT state::text AS state, count(*) AS count FROM pgboss.job WHERE name = $1 GROUP BY state",
    [INVOCATION_QUEUE],
  );
  const jobs: Record<string, number> = Object.fromEntries(STATES.map((state) => [state, 0]));
  for (const row of states) jobs[row.state] = Number(row.count);
  const [dead] = await queue.sql<{ count: string }>(
    "SELECT count(*) AS count FROM pgboss.job WHERE name = $1",
    [DEAD_LETTER_QUEUE],
  );
  const workers = await queue.sql<QueueStatus["workers"][number] & { seen_at: Date }>(
    `SELECT id, host, pid, seen_at, current_job FROM qaas_worker
     WHERE seen_at > now() - make_interval(secs => $1) ORDER BY id`,
    [WORKER_ALIVE_SECONDS],
  );
  const [oldest] = await queue.sql<{
    id: string;
    run_id: string;
    agent: string;
    created_on: Date;
    waiting_seconds: string;
  }>(
    `SELECT id, data->>'run_id' AS run_id, data->'invocation'->>'agent' AS agent, created_on,
            extract(epoch FROM now() - created_on) AS waiting_seconds
     FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry') ORDER BY created_on LIMIT 1`,
    [INVOCATION_QUEUE],
  );
  const targets = await queue.sql<{ target: string; active: string; waiting: string }>(
    `SELECT data->>'target' AS target,
            count(*) FILTER (WHERE state = 'active') AS active,
            count(*) FILTER (WHERE state IN ('created', 'retry')) AS waiting
     FROM pgboss.job WHERE name = $1 AND state < 'completed' GROUP BY 1 ORDER BY 1`,
    [INVOCATION_QUEUE],
  );
  // A bigint advisory lock shows in pg_locks as its high half (classid) and low half (objid).
  const holds = await queue.sql<QueueStatus["holds"][number]>(
    `WITH live AS (
       SELECT h.target, h.exclusive, h.cap FROM qaas_target_hold h
       JOIN pg_stat_activity a ON a.pid = h.pid AND a.backend_start = h.backend_start),
     held_slots AS (
       SELECT (l.classid::bigint << 32) | l.objid::bigint AS key FROM pg_locks l
       WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1)
     SELECT live.target, count(*)::int AS invocations, bool_or(live.exclusive) AS exclusive,
            max(live.cap)::int AS cap,
            (SELECT count(*)::int FROM held_slots WHERE held_slots.key IN
               (SELECT hashtextextended($1 || live.target || ':' || slot, 0)
                FROM generate_series(0, max(live.cap) - 1) AS slot)) AS in_flight
     FROM live GROUP BY live.target ORDER BY live.target`,
    [slotScope("")],
  );
  return {
    queue: describeQueueUrl(queue.url),
    jobs,
    dead_lettered: Number(dead?.count ?? 0),
    workers: workers.map((worker) => ({
      id: worker.id,
      host: worker.host,
      pid: worker.pid,
      seen_at: new Date(worker.seen_at).toISOString(),
      current_job: worker.current_job,
    })),
    oldest_waiting: oldest
      ? {
          job: oldest.id,
          run_id: oldest.run_id,
          agent: oldest.agent,
          created_at: new Date(oldest.created_on).toISOString(),
          waiting_seconds: Math.round(Number(oldest.waiting_seconds)),
        }
      : null,
    targets: targets.map((row) => ({
      target: row.target,
      active: Number(row.active),
      waiting: Number(row.waiting),
    })),
    holds,
  };
}

export function renderQueueStatus(status: QueueStatus): string {
  const lines = [
    `queue ${status.queue}`,
    `jobs: ${STATES.map((state) => `${state} ${status.jobs[state] ?? 0}`).join(", ")}; dead-lettered ${status.dead_lettered}`,
    status.oldest_waiting
      ? `oldest waiting: ${status.oldest_waiting.agent} of ${status.oldest_waiting.run_id}, ${status.oldest_waiting.waiting_seconds}s (job ${status.oldest_waiting.job})`
      : "oldest waiting: none",
    "",
    `workers alive (seen in the last ${WORKER_ALIVE_SECONDS}s): ${status.workers.length}`,
  ];
  if (status.workers.length > 0) {
    lines.push(
      renderTable(
        [
          { header: "worker", value: (worker: QueueStatus["workers"][number]) => worker.id },
          { header: "host", value: (worker) => worker.host },
          { header: "pid", value: (worker) => String(worker.pid), align: "right" },
          { header: "seen", value: (worker) => worker.seen_at },
          { header: "job", value: (worker) => worker.current_job ?? "idle" },
        ],
        status.workers,
      ).trimEnd(),
    );
  }
  lines.push("", `per-target load: ${status.targets.length === 0 ? "none" : ""}`.trimEnd());
  if (status.targets.length > 0) {
    lines.push(
      renderTable(
        [
          { header: "target", value: (row: QueueStatus["targets"][number]) => row.target },
          { header: "active", value: (row) => String(row.active), align: "right" },
          { header: "waiting", value: (row) => String(row.waiting), align: "right" },
        ],
        status.targets,
      ).trimEnd(),
    );
  }
  lines.push("", `services held now: ${status.holds.length === 0 ? "none" : ""}`.trimEnd());
  if (status.holds.length > 0) {
    lines.push(
      renderTable(
        [
          { header: "service", value: (row: QueueStatus["holds"][number]) => row.target },
          { header: "invocations", value: (row) => String(row.invocations), align: "right" },
          { header: "alone", value: (row) => (row.exclusive ? "yes" : "no") },
          { header: "in flight", value: (row) => `${row.in_flight}/${row.cap}`, align: "right" },
        ],
        status.holds,
      ).trimEnd(),
    );
  }
  return `${lines.join("\n")}\n`;
}
