import type { Command } from "commander";
import { resolveHome } from "../../store/home.ts";

// `qaas explore`: one charter, walked live against a target, with a budget that ends it on its own. The
// exit code carries the verdict so a script can tell a product failure (1) from a blocked run (3).

export function register(program: Command): void {
  program
    .command("explore")
    .description(
      "Explore a live target along a charter and report what looks wrong (exit 0 passed, 1 failed, 3 blocked).",
    )
    .option("--charter <text>", 'what to explore, e.g. "open the entry page and find a way to Settings"')
    .option("--target <target>", "target profile name (config/targets/<name>.yaml) or path to a profile file")
    .option("--persona <role>", "profile role to browse as (default: anonymous)")
    .option(
      "--budget <spec>",
      "steps=8,minutes=10,tokens=150000 (any subset; out-of-range values are clamped)",
    )
    .option("--config <dir>", "configuration folder (default: the package's config/)")
    .option("--json", "print the run file as JSON; no progress lines")
    .action(async (options, command: Command) => {
      const home = resolveHome(command.optsWithGlobals().home);
      const { exploreTarget } = await import("../../explore/explore-run.ts");
      const { exitCodeOf } = await import("../../explore/verdict.ts");
      const controller = new AbortController();
      // Ctrl-C ends the run after the step in flight; the run file says it was interrupted.
      process.once("SIGINT", () => controller.abort());
      const outcome = await exploreTarget({
        home,
        charter: options.charter,
        target: options.target,
        persona: options.persona,
        budget: options.budget,
        configDir: options.config,
        signal: controller.signal,
        ...(options.json ? {} : { log: (line: string) => process.stderr.write(`${line}\n`) }),
      });
      process.stdout.write(
        options.json
          ? `${JSON.stringify(outcome.run, null, 2)}\n`
          : `${outcome.report}\nrun ${outcome.runId}: ${outcome.verdict} (run file ${outcome.runDir}/run.json)\n`,
      );
      process.exitCode = exitCodeOf(outcome.verdict);
    });
}
