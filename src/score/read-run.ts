import fs from "node:fs";
import path from "node:path";
import { type DefectEnvelope, validateEnvelope } from "../envelope/envelope.ts";
import { QaasError } from "../errors.ts";

// What `qaas score` needs from a run store, read straight from its files (runs/<id>/envelopes/*.json,
// ledger.jsonl, report.json) so scoring works on a finished run, a killed one and a hand-made one alike.

export interface RunLedgerLine {
  seq: number;
  at: string;
  kind: string;
  agent?: string;
  data: Record<string, unknown>;
}

export interface SkippedEnvelope {
  file: string;
  problems: string[];
}

export interface RunForScoring {
  runId: string;
  directory: string;
  envelopes: DefectEnvelope[];
  skipped: SkippedEnvelope[];
  /** `run_started.data.golden_ledger`, when the run recorded one. */
  goldenLedger?: string;
  costUsd?: number;
  /** Operations of the map the run pinned (`METHOD /path`), empty when it pinned none. */
  routes: string[];
}

/** The named run, or the newest one (run ids sort by time). */
export function findRunDirectory(home: string, runId?: string): { runId: string; directory: string } {
  const runsDirectory = path.join(home, "runs");
  const runs = fs.existsSync(runsDirectory)
    ? fs
        .readdirSync(runsDirectory, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort()
    : [];
  if (runId !== undefined) {
    if (runs.includes(runId)) return { runId, directory: path.join(runsDirectory, runId) };
    const newest = runs.slice(-5).reverse();
    const known = newest.length > 0 ? `; newest runs: ${newest.join(", ")}` : "";
    throw new QaasError("RUN_NOT_FOUND", `no run "${runId}" in ${runsDirectory}${known}`);
  }
  const newest = runs.at(-1);
  if (newest === undefined) {
    throw new QaasError(
      "RUN_NOT_FOUND",
      `no runs in ${runsDirectory}; start one with \`qaas run\`, or point --home / QAAS_HOME at the store that has them`,
    );
  }
  return { runId: newest, directory: path.join(runsDirectory, newest) };
}

export function readRunForScoring(directory: string, runId: string): RunForScoring {
  const ledger = readRunLedger(path.join(directory, "ledger.jsonl"));
  const started = ledger.find((line) => line.kind === "run_started");
  const goldenLedger = started?.data.golden_ledger;
  const { envelopes, skipped } = readEnvelopes(path.join(directory, "envelopes"));
  const costUsd = reportedCost(path.join(directory, "report.json")) ?? ledgerCost(ledger);
  return {
    runId,
    directory,
    envelopes,
    skipped,
    routes: pinnedRoutes(path.join(directory, "pinned-map.json")),
    ...(typeof goldenLedger === "string" && goldenLedger !== "" ? { goldenLedger } : {}),
    ...(costUsd !== undefined ? { costUsd } : {}),
  };
}

/**
 * The pinned map's operations, read leniently: scoring must not fail because a map written by an older
 * version no longer validates; without them only the ledger's own routes are known. Crawled pages are left
 * out: their paths are concrete URLs (`/projects/7`), not routes.
 */
function pinnedRoutes(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  try {
    const pinned = JSON.parse(fs.readFileSync(file, "utf8")) as {
      map?: { operations?: Array<{ method?: unknown; path?: unknown }> };
    };
    return (pinned.map?.operations ?? [])
      .filter((operation) => typeof operation.method === "string" && typeof operation.path === "string")
      .map((operation) => `${operation.method} ${operation.path}`);
  } catch {
    return [];
  }
}

/** Reads a run ledger; a last line cut short by a crash is dropped, a broken line before it is an error. */
export function readRunLedger(file: string): RunLedgerLine[] {
  if (!fs.existsSync(file)) return [];
  const lines = fs.readFileSync(file, "utf8").split("\n");
  while (lines.length > 0 && lines.at(-1)!.trim() === "") lines.pop();
  const entries: RunLedgerLine[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      if (index === lines.length - 1) return;
      throw new QaasError(
        "RUN_LEDGER_INVALID",
        `${file}: line ${index + 1} is not JSON; the run ledger is damaged before its last line`,
      );
    }
    if (isLedgerLine(parsed)) entries.push(parsed);
  });
  return entries;
}

function isLedgerLine(value: unknown): value is RunLedgerLine {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record.kind === "string" && typeof record.data === "object" && record.data !== null;
}

/** Envelopes that fail the schema are not findings; they are skipped and reported, not scored. */
export function readEnvelopes(directory: string): {
  envelopes: DefectEnvelope[];
  skipped: SkippedEnvelope[];
} {
  const envelopes: DefectEnvelope[] = [];
  const skipped: SkippedEnvelope[] = [];
  if (!fs.existsSync(directory)) return { envelopes, skipped };
  const files = fs
    .readdirSync(directory)
    .filter((name) => name.endsWith(".json"))
    .sort();
  for (const name of files) {
    const file = path.join(directory, name);
    let input: unknown;
    try {
      input = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (error) {
      skipped.push({
        file,
        problems: [`not JSON: ${error instanceof Error ? error.message : String(error)}`],
      });
      continue;
    }
    const validation = validateEnvelope(input);
    if (validation.ok) envelopes.push(validation.envelope);
    else
      skipped.push({ file, problems: validation.errors.map((error) => `${error.path}: ${error.message}`) });
  }
  return { envelopes, skipped };
}

/** The report's `budget.used_usd` is the run's own total (failed agents included), so it wins when present. */
function reportedCost(file: string): number | undefined {
  if (!fs.existsSync(file)) return undefined;
  try {
    const report = JSON.parse(fs.readFileSync(file, "utf8")) as { budget?: { used_usd?: unknown } };
    const used = report.budget?.used_usd;
    return typeof used === "number" && Number.isFinite(used) ? used : undefined;
  } catch {
    return undefined;
  }
}

function ledgerCost(ledger: readonly RunLedgerLine[]): number | undefined {
  const costs = ledger
    .filter((line) => line.kind === "agent_finished")
    .map((line) => line.data.cost_usd)
    .filter((cost): cost is number => typeof cost === "number" && Number.isFinite(cost));
  return costs.length === 0 ? undefined : costs.reduce((sum, cost) => sum + cost, 0);
}
