import fs from "node:fs";
import path from "node:path";
import { loadConfig } from "../config/load-config.ts";
import { QaasError } from "../errors.ts";
import { runScoreCommand } from "../score/score-command.ts";
import type { RunOptions } from "./start-run.ts";
import { startRun } from "./start-run.ts";

// `qaas sweep`: every target profile × every mode asked for, each run scored against its golden ledger
// when it has one, and one verdict: below the quality gate (`thresholds.min_recall/min_precision`, or
// the options) the sweep fails. A run that errors is a failing row, not the end of the sweep.

export interface SweepOptions {
  home: string;
  configDir?: string;
  /** Profiles to sweep; default every `config/targets/*.yaml`. */
  targets?: string[];
  modes: string[];
  minRecall?: number;
  minPrecision?: number;
  /** Progress lines (stderr in the CLI). */
  log?: (message: string) => void;
  /** Tests inject seats, as for `startRun`. */
  seatFactory?: RunOptions["seatFactory"];
}

export interface SweepRow {
  target: string;
  mode: string;
  run_id: string | null;
  status: string;
  findings: number | null;
  recall: number | null;
  precision: number | null;
  /** Why the row fails the gate; empty when it passes. */
  failures: string[];
}

export interface SweepResult {
  gate: { min_recall: number; min_precision: number };
  rows: SweepRow[];
  passed: boolean;
}

export async function sweep(options: SweepOptions): Promise<SweepResult> {
  const config = loadConfig(options.configDir);
  const gate = {
    min_recall: options.minRecall ?? config.system.thresholds.min_recall,
    min_precision: options.minPrecision ?? config.system.thresholds.min_precision,
  };
  const targets = options.targets?.length ? options.targets : profilesIn(config.dir);
  const log = options.log ?? (() => {});
  const rows: SweepRow[] = [];
  for (const target of targets) {
    for (const mode of options.modes) {
      log(`sweep: ${target} × ${mode}: running`);
      const row = await sweepOne(target, mode, options, config.dir, gate);
      log(`sweep: ${target} × ${mode}: ${row.failures.length === 0 ? "pass" : row.failures.join("; ")}`);
      rows.push(row);
    }
  }
  return { gate, rows, passed: rows.every((row) => row.failures.length === 0) };
}

async function sweepOne(
  target: string,
  mode: string,
  options: SweepOptions,
  configDir: string,
  gate: SweepResult["gate"],
): Promise<SweepRow> {
  const row: SweepRow = {
    target,
    mode,
    run_id: null,
    status: "error",
    findings: null,
    recall: null,
    precision: null,
    failures: [],
  };
  try {
    const { runId, report } = await startRun({
      home: options.home,
      configDir,
      mode,
      target,
      json: true,
      ...(options.seatFactory ? { seatFactory: options.seatFactory } : {}),
    });
    Object.assign(row, { run_id: runId, status: report.status, findings: report.findings.total });
    if (report.status !== "completed") row.failures.push(`run ended ${report.status}`);
  } catch (error) {
    row.failures.push(`run failed: ${error instanceof Error ? error.message : String(error)}`);
    return row;
  }
  let scorecard: ReturnType<typeof runScoreCommand>["scorecard"];
  try {
    scorecard = runScoreCommand({
      run: row.run_id ?? "",
      home: options.home,
      cwd: path.dirname(configDir),
    }).scorecard;
  } catch (error) {
    // A target without a golden ledger is run, not scored: the gate only measures what it can.
    if (error instanceof QaasError && error.code === "LEDGER_REQUIRED") return row;
    row.failures.push(`scoring failed: ${error instanceof Error ? error.message : String(error)}`);
    return row;
  }
  row.recall = scorecard.recall;
  row.precision = scorecard.precision;
  if (scorecard.recall !== null && scorecard.recall < gate.min_recall)
    row.failures.push(`recall ${format(scorecard.recall)} < ${format(gate.min_recall)}`);
  if (scorecard.precision !== null && scorecard.precision < gate.min_precision)
    row.failures.push(`precision ${format(scorecard.precision)} < ${format(gate.min_precision)}`);
  return row;
}

/** Every target profile in a config folder: what a sweep covers by default. */
export function profilesIn(configDir: string): string[] {
  const folder = path.join(configDir, "targets");
  if (!fs.existsSync(folder)) {
    throw new QaasError("NO_TARGET", `no target profiles in ${folder}; pass --target <name|path>`);
  }
  return fs
    .readdirSync(folder)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => path.join(folder, name));
}

function format(value: number | null): string {
  return value === null ? "—" : value.toFixed(2);
}

export function renderSweep(result: SweepResult): string {
  const header = ["target", "mode", "run", "status", "findings", "recall", "precision", "gate"];
  const body = result.rows.map((row) => [
    path.basename(row.target).replace(/\.ya?ml$/, ""),
    row.mode,
    row.run_id ?? "—",
    row.status,
    row.findings === null ? "—" : String(row.findings),
    format(row.recall),
    format(row.precision),
    row.failures.length === 0 ? "pass" : `FAIL: ${row.failures.join("; ")}`,
  ]);
  const widths = header.map((_, column) =>
    Math.max(...[header, ...body].map((cells) => (cells[column] ?? "").length)),
  );
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join("  ");
  return `${[line(header), ...body.map(line)].join("\n")}\n\ngate: recall ≥ ${format(
    result.gate.min_recall,
  )}, precision ≥ ${format(result.gate.min_precision)}: ${result.passed ? "pass" : "FAIL"}\n`;
}
