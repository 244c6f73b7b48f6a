import type { LedgerEntry } from "../store/ledger-kinds.ts";
import type { RunStore } from "../store/run-store.ts";
import { booleanField, numberField, stringField, summarizeRun, tokenCount } from "../store/run-summary.ts";
import { summarizeEntry } from "./entry-summary.ts";

// Everything `qaas show <run>` says about a run, as one object (what `--json` prints). Built from the
// run's files only: the ledger, the envelopes folder and run.json.

export interface ShowView {
  id: string;
  mode: string;
  target: string;
  status: string;
  started: string;
  finished: string | null;
  commit: string | null;
  branch: string | null;
  dirty: boolean | null;
  seat: string | null;
  budget: {
    usd: number | null;
    tokens: number | null;
    spent_usd: number;
    spent_tokens: number;
    exceeded: boolean;
  };
  timeline: Array<{ seq: number; at: string; kind: string; agent: string | null; summary: string }>;
  agents: AgentRow[];
  findings: FindingRow[];
  warnings: string[];
}

export interface AgentRow {
  agent: string;
  invocations: number;
  cost_usd: number;
  tokens: number;
  turns: number;
  /** The outcome of the last invocation: its `outcome`, `failed`, or `running` if it never ended. */
  outcome: string;
}

export interface FindingRow {
  id: string;
  severity: string;
  defect_class: string;
  title: string;
  /** filed | held | unfiled | duplicate */
  state: string;
  ticket: string | null;
}

export function buildShowView(store: RunStore): ShowView {
  const { entries, warnings } = store.readLedger();
  const summary = summarizeRun(store.runId, store.meta(), entries);
  const started = entries.find((entry) => entry.kind === "run_started")?.data;
  const finished = entries.findLast((entry) => entry.kind === "run_finished");
  const budget = budgetCaps(entries, started, store.readReport());
  return {
    id: store.runId,
    mode: summary.mode,
    target: summary.target,
    status: summary.status,
    started: summary.started,
    finished: finished?.at ?? null,
    commit: stringField(started, "target_commit") ?? null,
    branch: stringField(started, "target_branch") ?? null,
    dirty: booleanField(started, "target_dirty") ?? null,
    seat: seatName(started?.seat),
    budget: {
      ...budget,
      spent_usd: summary.cost_usd,
      spent_tokens: summary.tokens,
      // An agent over its own budget is stopped alone; only the run's budget stops the run.
      exceeded: entries.some((entry) => entry.kind === "budget_exceeded" && entry.data.scope !== "agent"),
    },
    timeline: entries.map((entry) => ({
      seq: entry.seq,
      at: entry.at,
      kind: entry.kind,
      agent: agentOf(entry) ?? null,
      summary: summarizeEntry(entry),
    })),
    agents: agentRows(entries),
    findings: findingRows(store, entries),
    warnings,
  };
}

function agentRows(entries: readonly LedgerEntry[]): AgentRow[] {
  const rows = new Map<string, AgentRow & { started: number; ended: number }>();
  for (const entry of entries) {
    if (entry.kind !== "agent_started" && entry.kind !== "agent_finished" && entry.kind !== "agent_failed")
      continue;
    const agent = agentOf(entry) ?? "?";
    const row = rows.get(agent) ?? {
      agent,
      invocations: 0,
      cost_usd: 0,
      tokens: 0,
      turns: 0,
      outcome: "running",
      started: 0,
      ended: 0,
    };
    rows.set(agent, row);
    if (entry.kind === "agent_started") {
      row.started += 1;
      row.outcome = "running";
      continue;
    }
    row.ended += 1;
    row.cost_usd += numberField(entry.data, "cost_usd") ?? 0;
    row.tokens += tokenCount(entry.data.tokens) ?? 0;
    row.turns += numberField(entry.data, "turns") ?? 0;
    row.outcome =
      entry.kind === "agent_failed" ? "failed" : (stringField(entry.data, "outcome") ?? "finished");
  }
  return [...rows.values()].map(({ started, ended, ...row }) => ({
    ...row,
    invocations: Math.max(started, ended),
    cost_usd: Math.round(row.cost_usd * 1_000_000) / 1_000_000,
  }));
}

/** Envelopes on disk are the truth; an envelope only the ledger knows (its file lost) still shows. */
function findingRows(store: RunStore, entries: readonly LedgerEntry[]): FindingRow[] {
  const tickets = new Map<string, string>();
  const held = new Set<string>();
  for (const entry of entries) {
    const id = stringField(entry.data, "envelope_id");
    if (id === undefined) continue;
    if (entry.kind === "ticket_filed") tickets.set(id, stringField(entry.data, "key") ?? "?");
    if (entry.kind === "envelope_held") held.add(id);
  }
  const rows: FindingRow[] = store.readEnvelopes().map((envelope) => ({
    id: envelope.id,
    severity: envelope.severity,
    defect_class: envelope.defect_class,
    title: envelope.title,
    state: envelope.tracker.state,
    ticket: envelope.tracker.key ?? tickets.get(envelope.id) ?? null,
  }));
  const known = new Set(rows.map((row) => row.id));
  for (const entry of entries) {
    if (entry.kind !== "envelope_emitted") continue;
    const id = stringField(entry.data, "envelope_id");
    if (id === undefined || known.has(id)) continue;
    known.add(id);
    rows.push({
      id,
      severity: stringField(entry.data, "severity") ?? "?",
      defect_class: stringField(entry.data, "defect_class") ?? "?",
      title: stringField(entry.data, "title") ?? "",
      state: tickets.has(id)
        ? "filed"
        : held.has(id) || booleanField(entry.data, "fileable") === false
          ? "held"
          : "unfiled",
      ticket: tickets.get(id) ?? null,
    });
  }
  return rows;
}

/** The run's caps: run_started's `budget`, else the plan in the router's `run.start` event, else report.json. */
function budgetCaps(
  entries: readonly LedgerEntry[],
  started: Record<string, unknown> | undefined,
  report: unknown,
): { usd: number | null; tokens: number | null } {
  const fromStart = asRecord(started?.budget);
  if (fromStart)
    return { usd: numberField(fromStart, "usd") ?? null, tokens: numberField(fromStart, "tokens") ?? null };
  for (const entry of entries) {
    const event = asRecord(entry.data.event);
    if (entry.kind !== "router_event" || event?.type !== "run.start") continue;
    const plan = asRecord(asRecord(event.plan)?.budget);
    if (plan) return { usd: numberField(plan, "usd") ?? null, tokens: numberField(plan, "tokens") ?? null };
  }
  const fromReport = asRecord(asRecord(report)?.budget);
  return {
    usd: numberField(fromReport, "cap_usd") ?? null,
    tokens: numberField(fromReport, "cap_tokens") ?? null,
  };
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function agentOf(entry: LedgerEntry): string | undefined {
  return entry.agent ?? stringField(entry.data, "agent");
}

function seatName(seat: unknown): string | null {
  if (typeof seat === "string") return seat;
  if (seat !== null && typeof seat === "object") {
    const record = seat as Record<string, unknown>;
    const parts = [record.backend, record.model].filter((part) => typeof part === "string");
    return parts.length > 0 ? parts.join(" ") : null;
  }
  return null;
}
