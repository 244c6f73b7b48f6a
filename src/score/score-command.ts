import fs from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { QaasError } from "../errors.ts";
import { resolveHome } from "../store/home.ts";
import { loadGoldenLedger } from "./golden-ledger.ts";
import { findRunDirectory, readRunForScoring, type SkippedEnvelope } from "./read-run.ts";
import { renderScorecard } from "./render-scorecard.ts";
import { type Scorecard, score } from "./score.ts";

// `qaas score [run]`: read a run from the store, read the golden ledger, score, print. Returns the text to
// print so the command stays testable without a process.

export const DEFAULT_FILE_CONFIDENCE = 0.7;

export interface ScoreCommandOptions {
  run?: string;
  home?: string;
  ledger?: string;
  threshold?: string | number;
  json?: boolean;
  /** Where `config/system.yaml` is looked for; the working directory by default. */
  cwd?: string;
}

export interface ScoreCommandResult {
  scorecard: Scorecard;
  output: string;
  warnings: string[];
}

export function runScoreCommand(options: ScoreCommandOptions): ScoreCommandResult {
  const cwd = options.cwd ?? process.cwd();
  const threshold = resolveThreshold(options.threshold, cwd);
  const home = resolveHome(options.home);
  const { runId, directory } = findRunDirectory(home, options.run);
  const run = readRunForScoring(directory, runId);
  const ledgerFile = options.ledger ?? run.goldenLedger;
  if (ledgerFile === undefined) {
    throw new QaasError(
      "LEDGER_REQUIRED",
      `run ${runId} names no golden ledger (its run_started entry has no golden_ledger); pass --ledger <path to defects.yaml>`,
    );
  }
  const resolvedLedger = path.resolve(cwd, ledgerFile);
  const ledger = loadGoldenLedger(resolvedLedger);
  const scorecard = score(run.envelopes, ledger, {
    threshold,
    routes: run.routes,
    ...(run.costUsd !== undefined ? { costUsd: run.costUsd } : {}),
  });
  const warnings = run.skipped.map(describeSkipped);
  const output = options.json
    ? `${JSON.stringify(
        {
          run_id: runId,
          ledger: resolvedLedger,
          ...scorecard,
          skipped_envelopes: run.skipped,
        },
        null,
        2,
      )}\n`
    : renderScorecard(scorecard, { runId, ledgerFile: resolvedLedger });
  return { scorecard, output, warnings };
}

/** `--threshold`, else `thresholds.file_confidence` of ./config/system.yaml, else 0.7. */
export function resolveThreshold(option: string | number | undefined, cwd: string): number {
  if (option !== undefined) {
    const value = typeof option === "number" ? option : Number(option);
    if (String(option).trim() === "" || !Number.isFinite(value) || value < 0 || value > 1) {
      throw new QaasError("INVALID_OPTION", `--threshold must be a number from 0 to 1, got "${option}"`);
    }
    return value;
  }
  const file = path.join(cwd, "config", "system.yaml");
  if (!fs.existsSync(file)) return DEFAULT_FILE_CONFIDENCE;
  let config: unknown;
  try {
    config = parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new QaasError(
      "CONFIG_INVALID",
      `${file} is not valid YAML (${reason}); fix it or pass --threshold`,
    );
  }
  const configured = (config as { thresholds?: { file_confidence?: unknown } } | null)?.thresholds
    ?.file_confidence;
  if (configured === undefined) return DEFAULT_FILE_CONFIDENCE;
  if (typeof configured !== "number" || configured < 0 || configured > 1) {
    throw new QaasError(
      "CONFIG_INVALID",
      `${file}: thresholds.file_confidence must be a number from 0 to 1, got ${JSON.stringify(configured)}`,
    );
  }
  return configured;
}

function describeSkipped(skipped: SkippedEnvelope): string {
  return `skipped ${skipped.file}, not a valid envelope: ${skipped.problems.slice(0, 3).join("; ")}`;
}
