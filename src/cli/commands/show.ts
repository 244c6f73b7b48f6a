import type { Command } from "commander";
import { QUEUE_READ_OPTION } from "../queue-read-option.ts";

// `qaas show <run>`: one run read back from its files — findings by severity, agents, spend; the raw
// timeline behind --timeline.
export function register(program: Command): void {
  program
    .command("show")
    .description(
      "show one run: findings by severity, agents and their outcome, spend (--timeline adds the ledger)",
    )
    .argument("<run>", "run id (see `qaas runs`), or `latest`")
    .option("--json", "print one JSON object instead of text (it always holds the timeline)")
    .option("--timeline", "also print the raw ledger timeline")
    .option(...QUEUE_READ_OPTION)
    .action(
      async (
        run: string,
        options: { json?: boolean; timeline?: boolean; queue?: string },
        command: Command,
      ) => {
        const { resolveHome } = await import("../../store/home.ts");
        const { openRunArgument } = await import("../open-run.ts");
        const { buildShowView } = await import("../show-view.ts");
        const { renderShow } = await import("../render-show.ts");
        const { copyQueueRuns } = await import("../queue-runs.ts");
        const home = resolveHome(command.optsWithGlobals<{ home?: string }>().home);
        await copyQueueRuns(options.queue, home);
        const view = buildShowView(openRunArgument(home, run));
        for (const warning of view.warnings) process.stderr.write(`qaas: warning: ${warning}\n`);
        process.stdout.write(
          options.json
            ? `${JSON.stringify(view, null, 2)}\n`
            : renderShow(view, { timeline: options.timeline === true }),
        );
      },
    );
}
