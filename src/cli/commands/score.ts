import type { Command } from "commander";
import { QUEUE_READ_OPTION } from "../queue-read-option.ts";

// `qaas score [run]`: compare a run's findings with a golden ledger. The work lives in src/score and is
// imported only when the command runs, so `qaas --help` stays fast.
export function register(program: Command): void {
  program
    .command("score")
    .description("score a run's findings against a golden ledger: recall, precision, agreement, cost")
    .argument("[run]", "run id (default: the newest run)")
    .option("--ledger <path>", "golden ledger (defects.yaml); default: the one the run recorded")
    .option(
      "--threshold <n>",
      "confidence a finding needs to count (default: thresholds.file_confidence, 0.7)",
    )
    .option("--json", "print one JSON object instead of the scorecard table")
    .option(...QUEUE_READ_OPTION)
    .action(
      async (
        run: string | undefined,
        { queue, ...options }: { ledger?: string; threshold?: string; json?: boolean; queue?: string },
        command: Command,
      ) => {
        const { runScoreCommand } = await import("../../score/score-command.ts");
        const { home } = command.optsWithGlobals<{ home?: string }>();
        const { copyQueueRuns } = await import("../queue-runs.ts");
        const { resolveHome } = await import("../../store/home.ts");
        await copyQueueRuns(queue, resolveHome(home));
        const result = runScoreCommand({
          ...options,
          ...(run !== undefined ? { run } : {}),
          ...(home !== undefined ? { home } : {}),
        });
        for (const warning of result.warnings) process.stderr.write(`qaas: warning: ${warning}\n`);
        process.stdout.write(result.output);
      },
    );
}
