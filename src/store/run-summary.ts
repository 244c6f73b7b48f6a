import os from "node:os";
import type { LedgerEntry } from "./ledger-kinds.ts";

// What `qaas runs` shows, derived from the ledger alone (the ledger is the truth; run.json only knows
// what was said at creation). The data shapes below are the conventions the engine writes; readers take
// every field defensively because a run killed half-way has only some of them.
//
//   run_started.data      = { run_id, mode, target, target_file, golden_ledger?, target_commit,
//                             target_branch, target_dirty, roster, seat, budget?: { usd?, tokens? } }
//   agent_started.data    = { agent, invocation, task_artifact? }
//   agent_finished.data   = { agent, invocation, outcome, turns, cost_usd, tokens }
//   agent_failed.data     = { agent, invocation, error, turns?, cost_usd?, tokens? }
//   envelope_emitted.data = { envelope_id, fingerprint, title, domain, defect_class, severity, fileable }
//   envelope_held.data    = { envelope_id, reason }
//   ticket_filed.data     = { envelope_id, fingerprint, tracker, key, url }
//   run_finished.data     = { status, findings, cost_usd, tokens }
//
// `tokens` is a number (input + output); an object { input, output } or { total } is also accepted.

/** Written once by `RunStore.create` (and refreshed by `claim`), so a run is listed before it logs. */
export interface RunMeta {
  id: string;
  mode: string;
  target: string;
  created_at: string;
  /** The process that owns the run, to tell a live run from one that was killed. */
  pid: number;
  host: string;
}

export interface RunSummary {
  id: string;
  mode: string;
  target: string;
  started: string;
  /** run_finished's status, else `running` (owner alive), `incomplete` (owner gone) or `corrupt`. */
  status: string;
  findings: number;
  cost_usd: number;
  tokens: number;
}

export function summarizeRun(
  id: string,
  meta: RunMeta | undefined,
  entries: readonly LedgerEntry[],
  ownerAlive: boolean = isOwnerAlive(meta),
): RunSummary {
  const started = entries.find((entry) => entry.kind === "run_started");
  const finished = entries.findLast((entry) => entry.kind === "run_finished");
  const spent = spending(entries);
  const emitted = new Set(
    entries
      .filter((entry) => entry.kind === "envelope_emitted")
      .map((entry) => stringField(entry.data, "envelope_id") ?? `seq-${entry.seq}`),
  );
  return {
    id,
    mode: stringField(started?.data, "mode") ?? meta?.mode ?? "?",
    target: stringField(started?.data, "target") ?? meta?.target ?? "?",
    started: started?.at ?? meta?.created_at ?? entries[0]?.at ?? "",
    status: finished
      ? (stringField(finished.data, "status") ?? "finished")
      : ownerAlive
        ? "running"
        : "incomplete",
    findings: numberField(finished?.data, "findings") ?? emitted.size,
    cost_usd: numberField(finished?.data, "cost_usd") ?? spent.cost_usd,
    tokens: tokenCount(finished?.data?.tokens) ?? spent.tokens,
  };
}

/** Cost and tokens of every agent invocation that ended, failed ones included (they were paid for). */
export function spending(entries: readonly LedgerEntry[]): { cost_usd: number; tokens: number } {
  let cost = 0;
  let tokens = 0;
  for (const entry of entries) {
    if (entry.kind !== "agent_finished" && entry.kind !== "agent_failed") continue;
    cost += numberField(entry.data, "cost_usd") ?? 0;
    tokens += tokenCount(entry.data.tokens) ?? 0;
  }
  return { cost_usd: roundCost(cost), tokens };
}

/** True while the process that owns the run exists (on this host; another host's run is assumed live). */
export function isOwnerAlive(meta: RunMeta | undefined): boolean {
  if (!meta || !Number.isInteger(meta.pid) || meta.pid <= 0) return false;
  if (meta.host !== os.hostname()) return true;
  try {
    process.kill(meta.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function tokenCount(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    if (typeof record.total === "number") return record.total;
    const input = typeof record.input === "number" ? record.input : 0;
    const output = typeof record.output === "number" ? record.output : 0;
    if (typeof record.input === "number" || typeof record.output === "number") return input + output;
  }
  return undefined;
}

export function stringField(data: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = data?.[key];
  return typeof value === "string" ? value : undefined;
}

export function numberField(data: Record<string, unknown> | undefined, key: string): number | undefined {
  const value = data?.[key];
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

export function booleanField(data: Record<string, unknown> | undefined, key: string): boolean | undefined {
  const value = data?.[key];
  return typeof value === "boolean" ? value : undefined;
}

function roundCost(value: number): number {
  return Math.round(value * 1_000_000) / 1_000_000;
}
