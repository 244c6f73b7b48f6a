import fs from "node:fs";
import path from "node:path";
import { SEVERITIES, type Severity } from "../envelope/taxonomy.ts";
import { LEDGER_FILE, RunStore } from "../store/run-store.ts";
import type { RunSummary } from "../store/run-summary.ts";

// A run seen against the runs of the same target before it: which findings are new, which recurred and
// which were not found again (compared by fingerprint, which is stable across wording, lines and time),
// and how many findings each run had by severity (the trend chart). Other runs are read leniently — a
// damaged envelope file of an old run must not stop today's report — and only the fields needed here.

export interface RememberedFinding {
  fingerprint: string;
  title: string;
  severity: string;
  defect_class: string;
  location: string;
}

export interface TrendPoint {
  runId: string;
  started: string;
  counts: Record<Severity, number>;
}

export interface RunHistory {
  previousRunId: string | null;
  /** Findings of the previous run, by fingerprint. */
  previous: Map<string, RememberedFinding>;
  /** Oldest first, the current run last. */
  trend: TrendPoint[];
}

/** At most this many runs in the trend: the chart stays readable and the report fast on a long history. */
export const TREND_RUNS = 20;

export function readRunHistory(home: string, runId: string, target: string, started: string): RunHistory {
  const earlier = RunStore.list(home)
    .filter((run) => run.target === target && run.id !== runId && isBefore(run, started, runId))
    .filter((run) => run.status !== "corrupt");
  // RunStore.list is newest first.
  const previousRun = earlier[0];
  const trendRuns = earlier.slice(0, TREND_RUNS - 1).reverse();
  const trend = trendRuns.map((run) => ({
    runId: run.id,
    started: run.started,
    counts: severityCounts(rememberedFindings(home, run.id).values()),
  }));
  const current = rememberedFindings(home, runId);
  trend.push({ runId, started, counts: severityCounts(current.values()) });
  return {
    previousRunId: previousRun?.id ?? null,
    previous: previousRun ? rememberedFindings(home, previousRun.id) : new Map(),
    trend,
  };
}

function isBefore(run: RunSummary, started: string, runId: string): boolean {
  if (run.started === "" || started === "") return run.id < runId;
  return run.started < started || (run.started === started && run.id < runId);
}

/** Fingerprint → the finding's headline; files that are not JSON or lack a fingerprint are passed over. */
export function rememberedFindings(home: string, runId: string): Map<string, RememberedFinding> {
  const directory = path.join(home, "runs", runId, "envelopes");
  const found = new Map<string, RememberedFinding>();
  if (!fs.existsSync(path.join(home, "runs", runId, LEDGER_FILE)) || !fs.existsSync(directory)) return found;
  for (const name of fs.readdirSync(directory).sort()) {
    if (!name.endsWith(".json") || name.startsWith(".")) continue;
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(fs.readFileSync(path.join(directory, name), "utf8")) as Record<string, unknown>;
    } catch {
      continue;
    }
    const dedupe = value.dedupe as { fingerprint?: unknown } | undefined;
    const location = value.location as { kind?: unknown; value?: unknown } | undefined;
    if (typeof dedupe?.fingerprint !== "string") continue;
    found.set(dedupe.fingerprint, {
      fingerprint: dedupe.fingerprint,
      title: String(value.title ?? ""),
      severity: String(value.severity ?? "low"),
      defect_class: String(value.defect_class ?? ""),
      location: `${String(location?.kind ?? "")} ${String(location?.value ?? "")}`.trim(),
    });
  }
  return found;
}

function severityCounts(findings: Iterable<{ severity: string }>): Record<Severity, number> {
  const counts = Object.fromEntries(SEVERITIES.map((severity) => [severity, 0])) as Record<Severity, number>;
  for (const finding of findings) {
    if ((SEVERITIES as readonly string[]).includes(finding.severity))
      counts[finding.severity as Severity] += 1;
  }
  return counts;
}
