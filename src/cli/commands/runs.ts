import type { Command } from "commander";
import { QUEUE_READ_OPTION } from "../queue-read-option.ts";

// `qaas runs`: every run in the store, newest first.
export function register(program: Command): void {
  program
    .command("runs")
    .description("list runs, newest first: id, mode, target, started, status, findings, cost")
    .option("--json", "print a JSON array instead of the table")
    .option(...QUEUE_READ_OPTION)
    .action(async (options: { json?: boolean; queue?: string }, command: Command) => {
      const { resolveHome } = await import("../../store/home.ts");
      const { RunStore } = await import("../../store/run-store.ts");
      const { renderRuns } = await import("../render-runs.ts");
      const { copyQueueRuns } = await import("../queue-runs.ts");
      const home = resolveHome(command.optsWithGlobals<{ home?: string }>().home);
      await copyQueueRuns(options.queue, home);
      const runs = RunStore.list(home);
      process.stdout.write(options.json ? `${JSON.stringify(runs, null, 2)}\n` : renderRuns(runs, home));
    });
}
