import type { DefectEnvelope } from "../envelope/envelope.ts";
import { type BugBashReport, bugBashReport } from "../explore/bug-bash/bash-report.ts";
import type { RunState } from "../router/run-state.ts";
import type { LedgerEntry } from "../store/ledger-kinds.ts";
import type { FinalCatch } from "./final-catch.ts";

// report.json: the stable output of a run. Built only from the ledger, the envelopes and the router's
// final state, so a resumed run reports the same way as one that never stopped. Keys are only ever
// added (documented as optional), never changed: other tools read this file.

export const REPORT_VERSION = 1;

export interface RunReport {
  report_version: number;
  run_id: string;
  mode: string;
  status: "completed" | "budget_exceeded" | "interrupted";
  target: { name: string; commit: string | null; branch: string | null; dirty: boolean | null };
  started_at: string | null;
  finished_at: string;
  phases: Array<{
    phase: string;
    started_at: string | null;
    finished_at: string | null;
    invocations: number;
  }>;
  agents: Array<{
    agent: string;
    invocations: number;
    outcomes: Record<string, number>;
    turns: number;
    cost_usd: number;
    tokens: number;
  }>;
  findings: {
    total: number;
    by_state: Record<string, number>;
    by_domain: Record<string, number>;
    items: Array<{
      id: string;
      domain: string;
      defect_class: string;
      severity: string;
      title: string;
      location: string;
      confidence: number;
      state: string;
      discovered_by: string;
    }>;
  };
  tickets: Array<{ key: string; finding_id: string | null; url: string | null }>;
  verdicts: Array<{ ticket: string; verdict: string; branch: string | null }>;
  reviews: Array<{ ticket: string; decision: string; branch: string | null }>;
  escalations: Array<{ ticket: string | null; agent: string | null; reason: string }>;
  /** One row per skipped agent (a per-finding agent is skipped once per finding). */
  skipped: Array<{ agent: string; reason: string; invocations: number }>;
  dead_lettered: Array<{ agent: string; error: string }>;
  denials: number;
  /** Optional: each time the target stopped answering during the run, and what the run did (restart or stop). */
  target_down?: Array<{ at: string; message: string }>;
  /** Optional, bug-bash runs: the charter sessions, and every candidate confirmed or rejected with its reason. */
  bug_bash?: BugBashReport;
  budget: {
    cap_usd: number | null;
    cap_tokens: number | null;
    used_usd: number;
    used_tokens: number;
    exceeded: boolean;
  };
  gate: {
    status: "pass" | "attention" | "not_run";
    reasons: string[];
    /** The orchestrator's last look at every fileable finding; null when the run did not finish. */
    final_catch: FinalCatch | null;
  };
}

export function buildReport(input: {
  runId: string;
  mode: string;
  entries: readonly LedgerEntry[];
  envelopes: readonly DefectEnvelope[];
  state: RunState;
  finalCatch?: FinalCatch;
}): RunReport {
  const { entries, envelopes, state, finalCatch } = input;
  const started = entries.find((entry) => entry.kind === "run_started");
  const startedData = (started?.data ?? {}) as Record<string, unknown>;
  const ofKind = (kind: string) => entries.filter((entry) => entry.kind === kind);

  const phases = new Map<string, RunReport["phases"][number]>();
  for (const entry of ofKind("phase_started")) {
    const phase = String(entry.data.phase);
    phases.set(phase, {
      phase,
      started_at: entry.at,
      finished_at: null,
      invocations: Number(entry.data.invocations ?? 0),
    });
  }
  for (const entry of ofKind("phase_finished")) {
    const phase = phases.get(String(entry.data.phase));
    if (phase) phase.finished_at = entry.at;
  }

  const agents = new Map<string, RunReport["agents"][number]>();
  const agentRow = (name: string) => {
    let row = agents.get(name);
    if (!row) {
      row = { agent: name, invocations: 0, outcomes: {}, turns: 0, cost_usd: 0, tokens: 0 };
      agents.set(name, row);
    }
    return row;
  };
  for (const entry of ofKind("agent_started")) agentRow(String(entry.data.agent)).invocations += 1;
  for (const entry of ofKind("agent_finished")) {
    const row = agentRow(String(entry.data.agent));
    const outcome = String(entry.data.outcome);
    row.outcomes[outcome] = (row.outcomes[outcome] ?? 0) + 1;
    row.turns += Number(entry.data.turns ?? 0);
    row.cost_usd += Number(entry.data.cost_usd ?? 0);
    row.tokens += Number(entry.data.tokens ?? 0);
  }
  // A failed invocation's model calls still cost money; its outcome is counted by the dead-letter below.
  for (const entry of ofKind("agent_failed")) {
    const row = agentRow(String(entry.data.agent));
    row.cost_usd += Number(entry.data.cost_usd ?? 0);
    row.tokens += Number(entry.data.tokens ?? 0);
  }
  for (const entry of ofKind("agent_dead_lettered")) {
    const row = agentRow(String(entry.data.agent));
    row.outcomes.dead_lettered = (row.outcomes.dead_lettered ?? 0) + 1;
  }
  for (const entry of ofKind("agent_skipped")) {
    const row = agentRow(String(entry.data.agent));
    row.outcomes.skipped = (row.outcomes.skipped ?? 0) + 1;
  }

  const byState: Record<string, number> = {};
  const byDomain: Record<string, number> = {};
  for (const envelope of envelopes) {
    byState[envelope.tracker.state] = (byState[envelope.tracker.state] ?? 0) + 1;
    byDomain[envelope.domain] = (byDomain[envelope.domain] ?? 0) + 1;
  }

  const escalations = ofKind("escalation").map((entry) => ({
    ticket: (entry.data.ticket as string | null | undefined) ?? null,
    agent: (entry.data.agent as string | undefined) ?? null,
    reason: String(entry.data.reason),
  }));
  const targetDown = ofKind("target_down").map((entry) => ({
    at: String(entry.data.at ?? entry.at),
    message: String(entry.data.message),
  }));
  const budgetExceeded =
    state.budgetExceeded || ofKind("budget_exceeded").some((entry) => entry.data.scope === "run");
  const status: RunReport["status"] =
    state.status !== "done"
      ? "interrupted"
      : state.endReason === "budget_exceeded"
        ? "budget_exceeded"
        : "completed";
  const gateReasons = [
    ...(budgetExceeded ? ["the run stopped at its budget: results are partial"] : []),
    ...escalations.map((escalation) => `escalated: ${escalation.reason}`),
    ...ofKind("agent_dead_lettered").map(
      (entry) => `${String(entry.data.agent)} failed: ${String(entry.data.error)}`,
    ),
    ...targetDown.map((entry) => entry.message),
  ];

  return {
    report_version: REPORT_VERSION,
    run_id: input.runId,
    mode: input.mode,
    status,
    target: {
      name: String(startedData.target ?? ""),
      commit: (startedData.target_commit as string | null | undefined) ?? null,
      branch: (startedData.target_branch as string | null | undefined) ?? null,
      dirty: (startedData.target_dirty as boolean | null | undefined) ?? null,
    },
    started_at: started?.at ?? null,
    finished_at: new Date().toISOString(),
    phases: [...phases.values()],
    agents: [...agents.values()].map((row) => ({ ...row, cost_usd: round(row.cost_usd) })),
    findings: {
      total: envelopes.length,
      by_state: byState,
      by_domain: byDomain,
      items: envelopes.map((envelope) => ({
        id: envelope.id,
        domain: envelope.domain,
        defect_class: envelope.defect_class,
        severity: envelope.severity,
        title: envelope.title,
        location: `${envelope.location.kind} ${envelope.location.value}`,
        confidence: envelope.confidence,
        state: envelope.tracker.state,
        discovered_by: envelope.discovered_by,
      })),
    },
    tickets: ofKind("ticket_filed").map((entry) => ({
      key: String(entry.data.key),
      finding_id: (entry.data.finding_id as string | undefined) ?? null,
      url: (entry.data.url as string | undefined) ?? null,
    })),
    verdicts: ofKind("verdict_recorded").map((entry) => ({
      ticket: String(entry.data.ticket),
      verdict: String(entry.data.verdict),
      branch: (entry.data.branch as string | undefined) ?? null,
    })),
    reviews: ofKind("review_recorded").map((entry) => ({
      ticket: String(entry.data.ticket),
      decision: String(entry.data.decision),
      branch: (entry.data.branch as string | undefined) ?? null,
    })),
    escalations,
    skipped: skippedAgents(ofKind("agent_skipped")),
    dead_lettered: ofKind("agent_dead_lettered").map((entry) => ({
      agent: String(entry.data.agent),
      error: String(entry.data.error),
    })),
    denials: ofKind("tool_denied").length,
    ...(targetDown.length > 0 ? { target_down: targetDown } : {}),
    ...withBugBash(entries),
    budget: {
      cap_usd: state.plan.budget.usd ?? null,
      cap_tokens: state.plan.budget.tokens ?? null,
      used_usd: round(state.spend.usd),
      used_tokens: state.spend.tokens,
      exceeded: budgetExceeded,
    },
    gate: {
      status: status === "interrupted" ? "not_run" : gateReasons.length > 0 ? "attention" : "pass",
      reasons: gateReasons,
      final_catch: finalCatch ?? null,
    },
  };
}

function withBugBash(entries: readonly LedgerEntry[]): { bug_bash?: BugBashReport } {
  const section = bugBashReport(entries);
  return section ? { bug_bash: section } : {};
}

function skippedAgents(entries: readonly LedgerEntry[]): RunReport["skipped"] {
  const rows = new Map<string, RunReport["skipped"][number]>();
  for (const entry of entries) {
    const agent = String(entry.data.agent);
    const row = rows.get(agent) ?? { agent, reason: String(entry.data.reason), invocations: 0 };
    row.invocations += 1;
    rows.set(agent, row);
  }
  return [...rows.values()];
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
