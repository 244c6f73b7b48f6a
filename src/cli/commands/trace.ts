import type { Command } from "commander";

// `qaas trace <run>`: the raw ledger entries of a run, optionally filtered by kind and agent.
export function register(program: Command): void {
  program
    .command("trace")
    .description("print a run's raw ledger entries")
    .argument("<run>", "run id (see `qaas runs`), or `latest`")
    .option("--kind <kinds>", "only entries of these kinds (comma-separated)")
    .option("--agent <agent>", "only entries of this agent")
    .option("--json", "print one JSON object { run, count, entries, warnings }")
    .action(
      async (run: string, options: { kind?: string; agent?: string; json?: boolean }, command: Command) => {
        const { resolveHome } = await import("../../store/home.ts");
        const { openRunArgument } = await import("../open-run.ts");
        const { filterTrace, renderTrace } = await import("../render-trace.ts");
        const home = resolveHome(command.optsWithGlobals<{ home?: string }>().home);
        const store = openRunArgument(home, run);
        const { entries, warnings } = store.readLedger();
        const kept = filterTrace(entries, options);
        for (const warning of warnings) process.stderr.write(`qaas: warning: ${warning}\n`);
        process.stdout.write(
          options.json
            ? `${JSON.stringify({ run: store.runId, count: kept.length, entries: kept, warnings }, null, 2)}\n`
            : renderTrace(kept),
        );
      },
    );
}
