import type { LedgerEntry, LedgerKind } from "../store/ledger-kinds.ts";
import { booleanField, numberField, stringField, tokenCount } from "../store/run-summary.ts";
import { formatCost, oneLine } from "./text-table.ts";

// One line per ledger entry for `qaas show`. Fields are read defensively (see run-summary.ts for the
// shapes the engine writes); a kind with no summary here, or data of an unexpected shape, is shown as its
// compact data, never an exception.

type Data = Record<string, unknown>;

const SUMMARIES: Partial<Record<LedgerKind, (data: Data) => string | undefined>> = {
  run_started: (data) =>
    join(
      field(data, "mode") && `mode ${field(data, "mode")}`,
      field(data, "target") && `on ${field(data, "target")}`,
      commitLine(data),
    ),
  run_resumed: (data) => join("resumed", field(data, "reason", "from_phase")),
  run_finished: (data) =>
    join(
      field(data, "status"),
      numberField(data, "findings") !== undefined && plural(numberField(data, "findings") ?? 0, "finding"),
      spend(data),
    ),
  environment_started: (data) => join(field(data, "mode"), field(data, "base_url", "url")),
  environment_stopped: (data) => join(field(data, "mode"), field(data, "reason")),
  phase_started: (data) => field(data, "phase"),
  phase_finished: (data) => join(field(data, "phase"), field(data, "status", "outcome")),
  router_event: (data) => join(field(data, "type", "event"), field(data, "phase", "agent")),
  router_effect: (data) => join(field(data, "type", "effect"), field(data, "agent", "phase")),
  agent_started: (data) => join(field(data, "invocation") && `invocation ${field(data, "invocation")}`),
  agent_finished: (data) =>
    join(
      field(data, "outcome"),
      numberField(data, "turns") !== undefined && `${numberField(data, "turns")} turns`,
      spend(data),
    ),
  agent_failed: (data) => join("failed", field(data, "error", "reason")),
  agent_retried: (data) =>
    join(
      numberField(data, "attempt") !== undefined && `attempt ${numberField(data, "attempt")}`,
      field(data, "reason", "error"),
    ),
  agent_dead_lettered: (data) => field(data, "reason", "error"),
  agent_skipped: (data) => field(data, "reason"),
  tool_called: (data) =>
    join(
      field(data, "tool"),
      booleanField(data, "ok") === false
        ? `error: ${field(data, "error") ?? "?"}`
        : booleanField(data, "ok") && "ok",
    ),
  tool_denied: (data) =>
    join(field(data, "tool"), field(data, "reason") && `denied: ${field(data, "reason")}`),
  envelope_emitted: (data) =>
    join(
      field(data, "envelope_id"),
      field(data, "severity"),
      field(data, "defect_class"),
      field(data, "title") && `— ${field(data, "title")}`,
    ),
  envelope_held: (data) =>
    join(field(data, "envelope_id"), field(data, "reason") && `held: ${field(data, "reason")}`),
  envelope_rejected: (data) => join("rejected", field(data, "reason", "error")),
  artifact_written: (data) => field(data, "uri", "name"),
  finding_reproduced: (data) => join(field(data, "envelope_id"), field(data, "test", "branch", "status")),
  ticket_filed: (data) =>
    join(field(data, "key"), field(data, "envelope_id") && `for ${field(data, "envelope_id")}`),
  review_recorded: (data) => join(field(data, "verdict", "decision"), field(data, "envelope_id", "branch")),
  verdict_recorded: (data) => join(field(data, "envelope_id"), field(data, "verdict")),
  escalation: (data) => join(field(data, "reason", "message"), field(data, "envelope_id")),
  budget_exceeded: (data) => join(field(data, "reason", "message"), spend(data)),
  hook_fired: (data) => join(field(data, "hook", "name"), field(data, "message", "reason")),
  seat_notice: (data) => field(data, "message", "notice"),
  decision_recorded: (data) => join(field(data, "gate", "question"), field(data, "decision", "verdict")),
  warning: (data) => field(data, "message"),
};

export function summarizeEntry(entry: LedgerEntry): string {
  let summary: string | undefined;
  try {
    summary = SUMMARIES[entry.kind]?.(entry.data);
  } catch {
    summary = undefined;
  }
  return oneLine(summary && summary.trim() !== "" ? summary : compactData(entry.data), 110);
}

export function compactData(data: Data): string {
  const text = JSON.stringify(data);
  return text === "{}" ? "" : text;
}

function field(data: Data, ...keys: string[]): string | undefined {
  for (const key of keys) {
    const value = stringField(data, key) ?? numberField(data, key)?.toString();
    if (value !== undefined && value !== "") return value;
  }
  return undefined;
}

function join(...parts: Array<string | false | undefined>): string | undefined {
  const present = parts.filter((part): part is string => typeof part === "string" && part !== "");
  return present.length > 0 ? present.join(" ") : undefined;
}

function commitLine(data: Data): string | undefined {
  const commit = field(data, "target_commit");
  if (!commit) return undefined;
  const branch = field(data, "target_branch");
  const dirty = booleanField(data, "target_dirty") ? ", dirty" : "";
  return `@ ${commit.slice(0, 10)}${branch ? ` (${branch}${dirty})` : dirty ? ` (${dirty.slice(2)})` : ""}`;
}

function spend(data: Data): string | undefined {
  const cost = numberField(data, "cost_usd");
  const tokens = tokenCount(data.tokens);
  return join(cost !== undefined && formatCost(cost), tokens !== undefined && `${tokens} tokens`);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
