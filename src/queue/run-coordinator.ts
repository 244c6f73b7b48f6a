import type { SeatFactory } from "../run/seat-resolver.ts";
import { resumeRun, startRun } from "../run/start-run.ts";
import { RunStore } from "../store/run-store.ts";
import { abortablePause } from "./abortable-pause.ts";
import { RUN_QUEUE, type RunJob, SWEEP_QUEUE, type SweepJob } from "./invocation-job.ts";
import type { JobQueue } from "./job-queue.ts";
import { materializeRun, RunPublisher, type SqlRunner } from "./shared-runs.ts";
import { enqueueRuns } from "./sweep-jobs.ts";

// The coordinator's side of a worker: takes whole runs from the run queue and drives each through its
// router, dispatching the run's invocations back onto the queue. Holding the run job is holding the
// run's lease, renewed by a heartbeat, so a run has one coordinator at a time; when that coordinator
// dies the lease runs out, another takes the job and resumes the run from its ledger.

export interface CoordinatorOptions {
  queue: JobQueue;
  home: string;
  signal: AbortSignal;
  workerId: string;
  pollMs?: number;
  /** Seats for runs this coordinator drives in-process (tests); queue-mode runs never use them. */
  seatFactory?: SeatFactory;
  log?: (message: string) => void;
}

export async function coordinateRuns(options: CoordinatorOptions): Promise<number> {
  const { queue } = options;
  const log = options.log ?? (() => {});
  let finished = 0;
  while (!options.signal.aborted) {
    const [sweep] = await queue.boss.fetch<SweepJob>(SWEEP_QUEUE, { batchSize: 1 });
    if (sweep) {
      const ids = await enqueueRuns(queue, sweep.data);
      await queue.complete(sweep.id, { runs: ids.length }, SWEEP_QUEUE);
      log(`coordinator ${options.workerId}: sweep ${sweep.id} queued ${ids.length} run(s)`);
      continue;
    }
    const [job] = await queue.boss.fetch<RunJob>(RUN_QUEUE, { batchSize: 1, includeMetadata: true });
    if (!job) {
      await abortablePause(options.pollMs ?? 500, options.signal);
      continue;
    }
    await coordinate(job, options, log);
    finished += 1;
  }
  return finished;
}

async function coordinate(
  job: { id: string; data: RunJob; expireInSeconds: number },
  options: CoordinatorOptions,
  log: (message: string) => void,
): Promise<void> {
  const { queue } = options;
  const sql: SqlRunner = queue.sql.bind(queue);
  const heartbeat = setInterval(
    () => void queue.heartbeat(job.id, RUN_QUEUE).catch(() => {}),
    Math.max(200, (job.expireInSeconds * 1000) / 3),
  );
  const common = {
    home: options.home,
    json: true,
    queueUrl: queue.url,
    queueSettings: queue.settings,
    signal: options.signal,
    ...(options.seatFactory ? { seatFactory: options.seatFactory } : {}),
  };
  try {
    const runId = job.data.run_id;
    // A run taken over from a coordinator on another machine is read from the queue's store.
    if (runId) await materializeRun(sql, options.home, runId);
    if (runId && isFinished(options.home, runId)) {
      await publishRun(sql, options.home, runId);
      await queue.complete(job.id, { run_id: runId, status: "finished" }, RUN_QUEUE);
      return;
    }
    log(
      `coordinator ${options.workerId}: ${runId ? `resuming ${runId}` : `${job.data.mode} on ${job.data.target_file}`}`,
    );
    const outcome = runId
      ? await resumeRun({ ...common, runId })
      : await startRun({
          ...common,
          configDir: job.data.config_dir,
          mode: job.data.mode,
          target: job.data.target_file,
          onRunCreated: async (created) => {
            await queue.sql(
              "UPDATE pgboss.job SET data = data || jsonb_build_object('run_id', $3::text) WHERE name = $1 AND id = $2",
              [RUN_QUEUE, job.id, created],
            );
          },
        });
    if (isFinished(options.home, outcome.runId)) {
      await publishRun(sql, options.home, outcome.runId);
      await queue.complete(
        job.id,
        { run_id: outcome.runId, status: outcome.report.status, findings: outcome.report.findings.total },
        RUN_QUEUE,
      );
      log(`coordinator ${options.workerId}: ${outcome.runId} ${outcome.report.status}`);
    }
    // A run stopped before its end (this worker is shutting down) keeps its job leased until the lease
    // runs out; then another coordinator resumes it.
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log(`coordinator ${options.workerId}: run job ${job.id} failed: ${message}`);
    await queue.fail(job.id, { message }, RUN_QUEUE).catch(() => {});
  } finally {
    clearInterval(heartbeat);
  }
}

/** Publishes the whole run (a fresh publisher sends whatever the store lacks) before its job is let go. */
async function publishRun(sql: SqlRunner, home: string, runId: string): Promise<void> {
  await new RunPublisher(sql, RunStore.open(home, runId)).push();
}

function isFinished(home: string, runId: string): boolean {
  try {
    return RunStore.open(home, runId)
      .readLedger()
      .entries.some((entry) => entry.kind === "run_finished");
  } catch {
    return false;
  }
}
