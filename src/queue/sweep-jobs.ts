import { loadConfig } from "../config/load-config.ts";
import { profilesIn } from "../run/sweep.ts";
import { RUN_QUEUE, type RunJob, SWEEP_QUEUE, type SweepJob } from "./invocation-job.ts";
import type { JobQueue } from "./job-queue.ts";

// `qaas sweep --queue`: every target × mode becomes a run job for whichever coordinator is free, and
// `--cron` keeps a schedule in the queue itself (pg-boss's schedule table), so nightlies need no host
// crontab: each tick sends a sweep job that a coordinator expands into run jobs.

export interface QueuedSweep {
  runs: Array<{ target: string; mode: string; job: string }>;
  schedule: { cron: string; name: string } | null;
}

export function sweepJob(options: { configDir?: string; targets?: string[]; modes: string[] }): SweepJob {
  const config = loadConfig(options.configDir);
  const targets = options.targets?.length ? options.targets : profilesIn(config.dir);
  return { targets, modes: options.modes, config_dir: config.dir };
}

export async function enqueueRuns(queue: JobQueue, sweep: SweepJob): Promise<QueuedSweep["runs"]> {
  const runs: QueuedSweep["runs"] = [];
  for (const target of sweep.targets) {
    for (const mode of sweep.modes) {
      const data: RunJob = { target_file: target, mode, config_dir: sweep.config_dir };
      const id = await queue.boss.send(RUN_QUEUE, data, {
        expireInSeconds: queue.settings.leaseSeconds,
        retryLimit: queue.settings.tries - 1,
        retryDelay: 1,
      });
      if (id) runs.push({ target, mode, job: id });
    }
  }
  return runs;
}

/** A cron schedule (UTC) that sends this sweep at each tick; the same cron again replaces it. */
export async function scheduleSweep(
  queue: JobQueue,
  sweep: SweepJob,
  cron: string,
): Promise<QueuedSweep["schedule"]> {
  await queue.boss.schedule(SWEEP_QUEUE, cron, sweep, { tz: "UTC" });
  return { cron, name: SWEEP_QUEUE };
}
