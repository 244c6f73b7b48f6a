import type { Command } from "commander";
import { resolveHome } from "../../store/home.ts";

export function register(program: Command): void {
  program
    .command("run")
    .description("Run the QA team on a target: map, discover, reproduce, file, verify, report.")
    .option(
      "--mode <mode>",
      "run mode from config/system.yaml (pr-check, nightly, fix-cycle, full-loop, …)",
      "nightly",
    )
    .option("--target <target>", "target profile name (config/targets/<name>.yaml) or path to a profile file")
    .option("--repo <repo>", "clone this repository (path or git URL) into the home and run on it")
    .option("--ref <ref>", "with --repo: the branch, tag or commit to check out")
    .option("--agent <agents...>", "run only these agents of the mode's roster")
    .option(
      "--seat <seat>",
      "put every agent in this worker seat: builtin | openai-compatible[:model] | anthropic[:model] | claude-code",
    )
    .option("--ticket <keys...>", "tickets to work on (fix-cycle)")
    .option(
      "--charter <text>",
      'bug-bash: a charter to walk, "as <role>: <charter>" for a persona (repeat for several; default: derived from the map)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option("--config <dir>", "configuration folder (default: the package's config/)")
    .option("--dry-run", "print each agent's seat, budget, tools, prompt and task; call nothing")
    .option("--resume <run>", "continue a run that was killed, from its ledger")
    .option(
      "--queue [url]",
      "run the agents on `qaas worker`s through this PostgreSQL job queue (url, secret_ref:ENV_NAME, or $QAAS_QUEUE_URL)",
    )
    .option("--json", "print the report (or dry run) as JSON; no progress lines")
    .action(async (options, command: Command) => {
      const home = resolveHome(command.optsWithGlobals().home);
      const { runCommand } = await import("../../run/run-command.ts");
      await runCommand({ ...options, home });
    });
}
