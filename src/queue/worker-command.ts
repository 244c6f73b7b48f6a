import { QaasError } from "../errors.ts";
import { JobQueue } from "./job-queue.ts";
import { describeQueueUrl, resolveQueueUrl } from "./queue-url.ts";
import { defaultWorkerId, runWorker } from "./worker.ts";

export interface WorkerCommandOptions {
  home: string;
  queue?: string;
  lease: string;
  tries: string;
  id?: string;
}

export async function workerCommand(options: WorkerCommandOptions): Promise<void> {
  const url = resolveQueueUrl(options.queue);
  const leaseSeconds = wholeNumber("--lease", options.lease, 1);
  const tries = wholeNumber("--tries", options.tries, 1);
  const queue = await JobQueue.open(url, { leaseSeconds, tries });
  const controller = new AbortController();
  const stop = () => {
    process.stderr.write("qaas worker: stopping after the current job\n");
    controller.abort();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const workerId = options.id ?? defaultWorkerId();
  process.stderr.write(`qaas worker ${workerId}: queue ${describeQueueUrl(url)}, store ${options.home}\n`);
  try {
    const finished = await runWorker({
      queue,
      home: options.home,
      signal: controller.signal,
      workerId,
      log: (message) => process.stderr.write(`${message}\n`),
    });
    process.stderr.write(`qaas worker ${workerId}: stopped after ${finished} job(s)\n`);
  } finally {
    await queue.close();
  }
}

function wholeNumber(flag: string, value: string, minimum: number): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < minimum) {
    throw new QaasError("INVALID_OPTION", `${flag} must be a whole number ≥ ${minimum}, got "${value}"`);
  }
  return number;
}
