import type { Command } from "commander";

// `qaas queue status`: the operator's view of the distributed mode's job queue.
export function register(program: Command): void {
  const queue = program.command("queue").description("the PostgreSQL job queue of the distributed mode");
  queue
    .command("status")
    .description("jobs by state, workers alive, the oldest waiting job, per-target load")
    .option(
      "--queue <url>",
      "the job queue: postgresql://… or secret_ref:ENV_NAME (default: $QAAS_QUEUE_URL)",
    )
    .option("--json", "print the status as JSON")
    .action(async (options: { queue?: string; json?: boolean }) => {
      const [{ JobQueue }, { resolveQueueUrl }, { queueStatus, renderQueueStatus }] = await Promise.all([
        import("../../queue/job-queue.ts"),
        import("../../queue/queue-url.ts"),
        import("../../queue/queue-status.ts"),
      ]);
      const opened = await JobQueue.open(resolveQueueUrl(options.queue));
      try {
        const status = await queueStatus(opened);
        process.stdout.write(
          options.json ? `${JSON.stringify(status, null, 2)}\n` : renderQueueStatus(status),
        );
      } finally {
        await opened.close();
      }
    });
}
