import { JobQueue } from "./job-queue.ts";
import { describeQueueUrl, resolveQueueUrl } from "./queue-url.ts";
import { defaultWorkerId, runWorker } from "./worker.ts";

export interface WorkerCommandOptions {
  home: string;
  queue?: string;
  id?: string;
}

export async function workerCommand(options: WorkerCommandOptions): Promise<void> {
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
