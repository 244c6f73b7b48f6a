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
    .option("--json", "print the sweep as JSON")
    .action(async (options: SweepCliOptions, command: Command) => {
      const home = resolveHome(command.optsWithGlobals().home);
      const { sweep, renderSweep } = await import("../../run/sweep.ts");
      const result = await sweep({
        home,
        modes: options.mode
          .split(",")
          .map((mode) => mode.trim())
          .filter((mode) => mode !== ""),
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

interface SweepCliOptions {
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
