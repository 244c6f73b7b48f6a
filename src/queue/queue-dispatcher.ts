import type { Invocation, RouterEvent } from "../router/run-state.ts";
import type { LedgerEntry, LedgerKind } from "../store/ledger-kinds.ts";
import { type ApplyTarget, applyInvocationResult } from "./apply-result.ts";
import { type InvocationJob, isInvocationResult } from "./invocation-job.ts";
import type { JobQueue } from "./job-queue.ts";
import { applyMemoryRecords } from "./shared-memory.ts";

// The coordinator's `dispatch` in queue mode: the same contract as the in-process runner (one
// invocation in, the event describing how it ended out, never throws), but the agent runs on whichever
// worker takes the job. The router and executor do not know the difference.

export interface QueueDispatcherOptions {
  queue: JobQueue;
  job: Omit<InvocationJob, "invocation">;
  store: ApplyTarget;
  record(kind: LedgerKind, data: Record<string, unknown>): LedgerEntry;
  /** Jobs whose results the run's ledger already holds (`job_finished`), never to be applied again. */
  settledJobs(): ReadonlySet<string>;
  /**
   * Shares the run's state so far with every machine (shared-runs.ts); called before each job goes out and
   * after each result is applied. A failure only delays it: the next call sends what this one did not.
   */
  publish?: () => Promise<void>;
  pollMs?: number;
  signal?: AbortSignal;
}

export function queueDispatcher(
  options: QueueDispatcherOptions,
): (invocation: Invocation) => Promise<RouterEvent> {
  const pollMs = options.pollMs ?? 250;
  const sql = options.queue.sql.bind(options.queue);
  return async (invocation) => {
    const publish = async () => {
      await options.publish?.().catch(() => {});
    };
    try {
      await publish();
      const jobId = await options.queue.sendInvocation({ ...options.job, invocation }, options.settledJobs());
      options.record("job_enqueued", { invocation: invocation.id, agent: invocation.agent, job: jobId });
      for (;;) {
        const job = await options.queue.job(jobId);
        if (job?.state === "completed" && isInvocationResult(job.output)) {
          // First, so that a failure here leaves the result unapplied (to be applied again, which counts
          // each fingerprint once).
          await applyMemoryRecords(sql, job.output.memory ?? []);
          const event = applyInvocationResult(job.output, options.store);
          options.record("job_finished", {
            invocation: invocation.id,
            agent: invocation.agent,
            job: jobId,
            worker: job.output.worker,
            tries: job.output.try,
          });
          await publish();
          return event;
        }
        if (job === null || job.state === "failed" || job.state === "cancelled") {
          const tries = (job?.retryCount ?? 0) + 1;
          const why = describeFailure(job?.output);
          options.record("job_finished", {
            invocation: invocation.id,
            agent: invocation.agent,
            job: jobId,
            worker: null,
            tries,
            dead_lettered: true,
            error: why,
          });
          return {
            type: "agent.failed",
            invocation: invocation.id,
            error: `job ${jobId} dead-lettered after ${tries} tr${tries === 1 ? "y" : "ies"}: ${why}`,
            transient: false,
          };
        }
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
    } catch (error) {
      return {
        type: "agent.failed",
        invocation: invocation.id,
        error: error instanceof Error ? error.message : String(error),
        transient: true,
      };
    }
  };
}

function describeFailure(output: unknown): string {
  if (typeof output === "object" && output !== null) {
    const value = output as { message?: unknown; value?: { message?: unknown } };
    if (typeof value.message === "string") return value.message;
    if (typeof value.value?.message === "string") return value.value.message;
  }
  return "no result";
}
