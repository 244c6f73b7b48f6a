import { QaasError } from "../errors.ts";
import { JobQueue } from "./job-queue.ts";
import { describeQueueUrl, resolveQueueUrl } from "./queue-url.ts";
import { coordinateRuns } from "./run-coordinator.ts";
import { defaultWorkerId, runWorker } from "./worker.ts";

export const WORKER_ROLES = ["both", "invocations", "coordinator"] as const;
export type WorkerRole = (typeof WORKER_ROLES)[number];

/** Runs one coordinating process drives at once. */
const RUNS_AT_ONCE = 4;

export interface WorkerCommandOptions {
  home: string;
  queue?: string;
  id?: string;
  role: string;
}

export async function workerCommand(options: WorkerCommandOptions): Promise<void> {
  if (!(WORKER_ROLES as readonly string[]).includes(options.role)) {
    throw new QaasError(
      "INVALID_OPTION",
      `--role must be one of ${WORKER_ROLES.join(", ")}, got "${options.role}"`,
    );
  }
  const role = options.role as WorkerRole;
  const url = resolveQueueUrl(options.queue);
  const queue = await JobQueue.open(url);
  const controller = new AbortController();
  const stop = () => {
    process.stderr.write("qaas worker: stopping after the current job\n");
    controller.abort();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const workerId = options.id ?? defaultWorkerId();
  const log = (message: string) => process.stderr.write(`${message}\n`);
  log(`qaas worker ${workerId} (${role}): queue ${describeQueueUrl(url)}, store ${options.home}`);
  try {
    const common = { queue, home: options.home, signal: controller.signal, workerId, log };
    // A coordinator mostly waits on its runs' invocations, so one process drives several runs at once.
    const coordinators =
      role === "invocations" ? [] : Array.from({ length: RUNS_AT_ONCE }, () => coordinateRuns(common));
    const [invocations, ...runs] = await Promise.all([
      role === "coordinator" ? 0 : runWorker(common),
      ...coordinators,
    ]);
    const runCount = runs.reduce((sum, count) => sum + count, 0);
    log(`qaas worker ${workerId}: stopped after ${invocations} invocation(s) and ${runCount} run(s)`);
  } finally {
    await queue.close();
  }
}
