import os from "node:os";
import pg from "pg";
import PgBoss from "pg-boss";
import { QaasError } from "../errors.ts";
import {
  DEAD_LETTER_QUEUE,
  INVOCATION_QUEUE,
  type InvocationJob,
  RUN_QUEUE,
  SWEEP_QUEUE,
} from "./invocation-job.ts";
import { describeQueueUrl } from "./queue-url.ts";
import { SHARED_MAPS_SCHEMA } from "./shared-maps.ts";
import { SHARED_MEMORY_SCHEMA } from "./shared-memory.ts";
import { SHARED_ONCE_SCHEMA } from "./shared-once.ts";
import { SHARED_RESTARTS_SCHEMA } from "./shared-restarts.ts";
import { SHARED_RUNS_SCHEMA } from "./shared-runs.ts";
import { SHARED_SPEND_SCHEMA } from "./shared-spend.ts";

// The one place that talks to pg-boss. A job's lease is pg-boss's expiry (`started_on + expire_in`):
// a worker renews it by moving `started_on` forward while it works (the heartbeat); when a worker dies
// the lease runs out, pg-boss's maintenance fails the job by timeout and, under the retry limit, puts
// it back for another worker, and after the last try sends it to the dead-letter queue.

export interface QueueSettings {
  /** Seconds a job stays leased without a heartbeat (set on the jobs this process sends). */
  leaseSeconds: number;
  /** Tries an invocation gets, the first included, before it is dead-lettered (likewise). */
  tries: number;
  /** How often pg-boss looks for expired leases; tests shorten it. */
  maintenanceSeconds: number;
}

export const DEFAULT_QUEUE_SETTINGS: QueueSettings = { leaseSeconds: 60, tries: 3, maintenanceSeconds: 30 };

/** Any fixed number: the advisory lock every qaas process takes while it sets up the queue. */
const SETUP_LOCK = 7_215_001;

/**
 * QAAS_QUEUE_LEASE_SECONDS shortens or lengthens every lease this process hands out (and how often it
 * looks for expired ones), for every command at once: workers, coordinators and `sweep --queue`.
 */
export function settingsFromEnvironment(env: Record<string, string | undefined>): QueueSettings {
  const raw = env.QAAS_QUEUE_LEASE_SECONDS;
  if (raw === undefined || raw === "") return DEFAULT_QUEUE_SETTINGS;
  const leaseSeconds = Number(raw);
  if (!Number.isInteger(leaseSeconds) || leaseSeconds < 1) {
    throw new QaasError(
      "QUEUE_LEASE_INVALID",
      `QAAS_QUEUE_LEASE_SECONDS must be a whole number of seconds ≥ 1, got "${raw}"`,
    );
  }
  return {
    ...DEFAULT_QUEUE_SETTINGS,
    leaseSeconds,
    maintenanceSeconds: Math.max(
      1,
      Math.min(DEFAULT_QUEUE_SETTINGS.maintenanceSeconds, Math.floor(leaseSeconds / 2)),
    ),
  };
}

export type InvocationJobRecord = PgBoss.JobWithMetadata<InvocationJob>;

export class JobQueue {
  private constructor(
    readonly boss: PgBoss,
    readonly url: string,
    readonly settings: QueueSettings,
  ) {}

  static async open(url: string, settings: Partial<QueueSettings> = {}): Promise<JobQueue> {
    const resolved = { ...settingsFromEnvironment(process.env), ...settings };
    const boss = new PgBoss({
      connectionString: url,
      maintenanceIntervalSeconds: resolved.maintenanceSeconds,
      monitorStateIntervalSeconds: resolved.maintenanceSeconds,
      max: 4,
    });
    // pg-boss reports background failures (a dropped connection) as events; without a listener Node
    // would treat them as uncaught. They surface again on the next call, with our message.
    boss.on("error", () => {});
    // Workers and coordinators start together; installing the schema and queues one process at a time
    // spares PostgreSQL the deadlocks of concurrent DDL.
    const setupLock = new pg.Client({ connectionString: url });
    try {
      await setupLock.connect();
      await setupLock.query("SELECT pg_advisory_lock($1)", [SETUP_LOCK]);
      await boss.start();
      await ensureQueues(boss);
      await boss.getDb().executeSql(WORKERS_TABLE, []);
      await boss.getDb().executeSql(HOLDS_TABLE, []);
      for (const schema of [
        SHARED_RUNS_SCHEMA,
        SHARED_MEMORY_SCHEMA,
        SHARED_MAPS_SCHEMA,
        SHARED_SPEND_SCHEMA,
        SHARED_RESTARTS_SCHEMA,
        SHARED_ONCE_SCHEMA,
      ]) {
        await boss.getDb().executeSql(schema, []);
      }
    } catch (error) {
      await setupLock.end().catch(() => {});
      await boss.stop({ graceful: false, wait: false }).catch(() => {});
      throw queueUnreachable(url, error);
    }
    await setupLock.end().catch(() => {});
    return new JobQueue(boss, url, resolved);
  }

  /**
   * Sends an invocation, or adopts the job already sent for it: a coordinator that took a run over
   * re-dispatches what was running (as a new router attempt), and must wait for the job its predecessor
   * sent rather than run the agent twice. `settled` are the jobs whose results the run already applied.
   */
  async sendInvocation(job: InvocationJob, settled: ReadonlySet<string> = new Set()): Promise<string> {
    const key = `${job.run_id}/${job.invocation.id}`;
    const sent = await this.sql<{ id: string }>(
      `SELECT id FROM pgboss.job WHERE name = $1 AND singleton_key = $2 AND state NOT IN ('failed', 'cancelled')
       ORDER BY created_on DESC`,
      [INVOCATION_QUEUE, key],
    );
    const adoptable = sent.find((row) => !settled.has(row.id));
    if (adoptable) return adoptable.id;
    const id = await this.boss.send(INVOCATION_QUEUE, job as unknown as object, {
      singletonKey: key,
      // Lease and tries travel with each job, so the coordinator's settings hold whichever worker runs it.
      expireInSeconds: this.settings.leaseSeconds,
      retryLimit: this.settings.tries - 1,
      retryDelay: 1,
      deadLetter: DEAD_LETTER_QUEUE,
    });
    if (id) return id;
    throw new QaasError(
      "QUEUE_SEND_FAILED",
      `the queue refused invocation ${job.invocation.id} of ${job.run_id}`,
    );
  }

  async fetchInvocation(): Promise<InvocationJobRecord | undefined> {
    const jobs = await this.boss.fetch<InvocationJob>(INVOCATION_QUEUE, {
      batchSize: 1,
      includeMetadata: true,
    });
    return jobs[0];
  }

  /** Renews a job's lease; false when the job is no longer this worker's (expired and re-leased, or done). */
  async heartbeat(jobId: string, queueName: string = INVOCATION_QUEUE): Promise<boolean> {
    const rows = await this.sql<{ id: string }>(
      "UPDATE pgboss.job SET started_on = now() WHERE name = $1 AND id = $2 AND state = 'active' RETURNING id",
      [queueName, jobId],
    );
    return rows.length > 0;
  }

  async complete(jobId: string, output: object, queueName: string = INVOCATION_QUEUE): Promise<void> {
    await this.boss.complete(queueName, jobId, output);
  }

  async fail(jobId: string, output: object, queueName: string = INVOCATION_QUEUE): Promise<void> {
    await this.boss.fail(queueName, jobId, output);
  }

  async job(jobId: string): Promise<InvocationJobRecord | null> {
    return this.boss.getJobById<InvocationJob>(INVOCATION_QUEUE, jobId, { includeArchive: true });
  }

  /** A worker says it is alive (and what it is doing); `queue status` counts the recent ones. */
  async touchWorker(workerId: string, currentJob: string | null): Promise<void> {
    await this.sql(
      `INSERT INTO qaas_worker (id, host, pid, started_at, seen_at, current_job)
       VALUES ($1, $2, $3, now(), now(), $4)
       ON CONFLICT (id) DO UPDATE SET seen_at = now(), current_job = $4`,
      [workerId, os.hostname(), process.pid, currentJob],
    );
  }

  async sql<Row>(text: string, values: unknown[]): Promise<Row[]> {
    try {
      return (await this.boss.getDb().executeSql(text, values)).rows as Row[];
    } catch (error) {
      if (isConnectionError(error)) throw queueUnreachable(this.url, error);
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, wait: true, close: true });
  }
}

async function ensureQueues(boss: PgBoss): Promise<void> {
  for (const name of [DEAD_LETTER_QUEUE, RUN_QUEUE, SWEEP_QUEUE]) {
    if (!(await boss.getQueue(name))) await boss.createQueue(name);
  }
  if (!(await boss.getQueue(INVOCATION_QUEUE))) {
    await boss.createQueue(INVOCATION_QUEUE, { name: INVOCATION_QUEUE, deadLetter: DEAD_LETTER_QUEUE });
  }
}

const WORKERS_TABLE = `CREATE TABLE IF NOT EXISTS qaas_worker (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  started_at timestamptz NOT NULL,
  seen_at timestamptz NOT NULL,
  current_job text
)`;

/** Who holds which target's lock now (fleet-limits.ts); the locks themselves are PostgreSQL's. */
const HOLDS_TABLE = `CREATE TABLE IF NOT EXISTS qaas_target_hold (
  pid integer NOT NULL,
  backend_start timestamptz NOT NULL,
  target text NOT NULL,
  exclusive boolean NOT NULL,
  cap integer NOT NULL
)`;

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code ?? "";
  return (
    ["ECONNREFUSED", "ENOTFOUND", "ETIMEDOUT", "ECONNRESET", "EHOSTUNREACH"].includes(code) ||
    code.startsWith("08")
  );
}

/** Says why the queue's database could not be reached, its password masked. */
export function queueUnreachable(url: string, error: unknown): QaasError {
  const detail = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string } | undefined)?.code;
  const what =
    code === "3D000"
      ? "the database does not exist"
      : code === "28P01" || code === "28000"
        ? "the server refused the credentials"
        : isConnectionError(error) ||
            (error instanceof AggregateError && error.errors.some(isConnectionError))
          ? "the database server is unreachable"
          : "the queue could not be opened";
  return new QaasError(
    "QUEUE_UNREACHABLE",
    `${what} at ${describeQueueUrl(url)}: ${detail || code || "no detail"}; check that PostgreSQL runs there and that --queue / QAAS_QUEUE_URL names it`,
  );
}
