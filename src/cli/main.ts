import { Command, CommanderError } from "commander";
import { QaasError } from "../errors.ts";
import { register as registerAdvisories } from "./commands/advisories.ts";
import { register as registerDoctor } from "./commands/doctor.ts";
import { register as registerExplore } from "./commands/explore.ts";
import { register as registerInit } from "./commands/init.ts";
import { register as registerMap } from "./commands/map.ts";
import { register as registerMcp } from "./commands/mcp.ts";
import { register as registerQueue } from "./commands/queue.ts";
import { register as registerReport } from "./commands/report.ts";
import { register as registerRun } from "./commands/run.ts";
import { register as registerRuns } from "./commands/runs.ts";
import { register as registerScore } from "./commands/score.ts";
import { register as registerShow } from "./commands/show.ts";
import { register as registerSweep } from "./commands/sweep.ts";
import { register as registerTrace } from "./commands/trace.ts";
import { register as registerTrackerCheck } from "./commands/tracker-check.ts";
import { register as registerValidate } from "./commands/validate.ts";
import { register as registerWorker } from "./commands/worker.ts";

// Every command is registered here; each command module declares its options and lazily imports the
// code that does the work, so `qaas --help` stays fast.
const program = new Command("qaas")
  .description("An autonomous QA team for web applications.")
  .option("--home <dir>", "where runs and memory live (default: $QAAS_HOME or ./.qaas)")
  .showHelpAfterError("(run with --help for usage)")
  .exitOverride();

const commandModules: Array<(program: Command) => void> = [
  registerRun,
  registerRuns,
  registerShow,
  registerTrace,
  registerReport,
  registerScore,
  registerValidate,
  registerDoctor,
  registerInit,
  registerMap,
  registerMcp,
  registerAdvisories,
  registerExplore,
  registerTrackerCheck,
  registerSweep,
  registerWorker,
  registerQueue,
];
for (const register of commandModules) register(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.exitCode = reportError(error);
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message; help and version exit cleanly.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (error instanceof QaasError) {
    process.stderr.write(`qaas: ${error.message} [${error.code}]\n`);
    return 1;
  }
  process.stderr.write(
    `qaas: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return 1;
}
