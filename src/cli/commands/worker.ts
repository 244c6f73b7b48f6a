import type { Command } from "commander";
import { resolveHome } from "../../store/home.ts";

// `qaas worker`: takes agent invocations from the job queue until stopped (SIGINT/SIGTERM finish the
// current job first). Any number of them, on any machine that sees the shared store folder.
export function register(program: Command): void {
  program
    .command("worker")
    .description(
      "take agent invocations and whole runs from the PostgreSQL job queue and run them (queue mode)",
    )
    .option(
      "--queue <url>",
      "the job queue: postgresql://… or secret_ref:ENV_NAME (default: $QAAS_QUEUE_URL)",
    )
    .option(
      "--role <role>",
      "both: run agents and coordinate runs; invocations: agents only; coordinator: runs only",
      "both",
    )
    .option("--id <name>", "this worker's name in `qaas queue status` (default: host-pid-random)")
    .action(async (options: WorkerCliOptions, command: Command) => {
      const home = resolveHome(command.optsWithGlobals().home);
      const { workerCommand } = await import("../../queue/worker-command.ts");
      await workerCommand({ ...options, home });
    });
}

export interface WorkerCliOptions {
  queue?: string;
  id?: string;
  role: string;
}
