import type { Command } from "commander";
import { QaasError } from "../../errors.ts";
import { resolveHome } from "../../store/home.ts";

// `qaas sweep`: run + score every target × mode, and fail below the quality gate. Progress goes to
// stderr so stdout carries only the table (or `--json`).
export function register(program: Command): void {
  program
    .command("sweep")
    .description("run every target profile in each mode, score each against its golden ledger, gate on it")
    .option("--target <targets...>", "profiles to sweep (default: every config/targets/*.yaml)")
    .option("--mode <modes>", "comma-separated run modes", "nightly")
    .option("--min-recall <n>", "fail below this recall (default: thresholds.min_recall)")
    .option("--min-precision <n>", "fail below this precision (default: thresholds.min_precision)")
    .option("--config <dir>", "configuration folder (default: the package's config/)")
    .option(
      "--queue [url]",
      "queue every target × mode as a run job for `qaas worker`s instead of running here (url, secret_ref:ENV_NAME, or $QAAS_QUEUE_URL)",
    )
    .option("--cron <expression>", "with --queue: keep this sweep as a cron schedule (UTC) in the queue")
    .option("--json", "print the sweep as JSON")
    .action(async (options: SweepCliOptions, command: Command) => {
      const home = resolveHome(command.optsWithGlobals().home);
      if (options.cron && !options.queue)
        throw new QaasError("BAD_OPTIONS", "--cron keeps a schedule in the job queue: pass --queue too");
      if (options.queue) {
        const { queueSweep, renderQueuedSweep } = await import("../../queue/sweep-command.ts");
        const queued = await queueSweep({
          queue: options.queue === true ? undefined : options.queue,
          modes: modesOf(options.mode),
          ...(options.target ? { targets: options.target.flatMap((value) => value.split(",")) } : {}),
          ...(options.config ? { configDir: options.config } : {}),
          ...(options.cron ? { cron: options.cron } : {}),
        });
        process.stdout.write(
          options.json ? `${JSON.stringify(queued, null, 2)}\n` : renderQueuedSweep(queued),
        );
        return;
      }
      const { sweep, renderSweep } = await import("../../run/sweep.ts");
      const result = await sweep({
        home,
        modes: modesOf(options.mode),
        ...(options.target ? { targets: options.target.flatMap((value) => value.split(",")) } : {}),
        ...(options.config ? { configDir: options.config } : {}),
        ...gateOption("--min-recall", options.minRecall, "minRecall"),
        ...gateOption("--min-precision", options.minPrecision, "minPrecision"),
        log: (message) => process.stderr.write(`${message}\n`),
      });
      process.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : renderSweep(result));
      if (!result.passed) {
        const failing = result.rows.filter((row) => row.failures.length > 0).length;
        throw new QaasError(
          "SWEEP_BELOW_GATE",
          `sweep failed: ${failing} of ${result.rows.length} run(s) below the gate`,
        );
      }
    });
}

function modesOf(value: string): string[] {
  return value
    .split(",")
    .map((mode) => mode.trim())
    .filter((mode) => mode !== "");
}

interface SweepCliOptions {
  queue?: string | true;
  cron?: string;
  target?: string[];
  mode: string;
  minRecall?: string;
  minPrecision?: string;
  config?: string;
  json?: boolean;
}

function gateOption<Key extends string>(flag: string, value: string | undefined, key: Key) {
  if (value === undefined) return {};
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number < 0 || number > 1) {
    throw new QaasError("INVALID_OPTION", `${flag} must be a number from 0 to 1, got "${value}"`);
  }
  return { [key]: number } as Record<Key, number>;
}
