import path from "node:path";
import { JobQueue } from "./job-queue.ts";
import { describeQueueUrl, resolveQueueUrl } from "./queue-url.ts";
import { enqueueRuns, type QueuedSweep, scheduleSweep, sweepJob } from "./sweep-jobs.ts";

export interface QueueSweepOptions {
  queue: string | undefined;
  modes: string[];
  targets?: string[];
  configDir?: string;
  cron?: string;
}

export async function queueSweep(options: QueueSweepOptions): Promise<QueuedSweep & { queue: string }> {
  const url = resolveQueueUrl(options.queue);
  const sweep = sweepJob(options);
  const queue = await JobQueue.open(url);
  try {
    // A schedule is the nightly's to run; queuing the runs now as well would run them twice tonight.
    if (options.cron) {
      return {
        queue: describeQueueUrl(url),
        runs: [],
        schedule: await scheduleSweep(queue, sweep, options.cron),
      };
    }
    return { queue: describeQueueUrl(url), runs: await enqueueRuns(queue, sweep), schedule: null };
  } finally {
    await queue.close();
  }
}

export function renderQueuedSweep(queued: QueuedSweep & { queue: string }): string {
  if (queued.schedule) {
    return `scheduled on ${queued.queue}: a sweep at "${queued.schedule.cron}" (UTC); \`qaas worker\`s run it\n`;
  }
  const lines = queued.runs.map(
    (run) => `${path.basename(run.target).replace(/\.ya?ml$/, "")}  ${run.mode}  job ${run.job}`,
  );
  return `${lines.join("\n")}\n${queued.runs.length} run(s) queued on ${queued.queue}; see \`qaas queue status\`\n`;
}
