// The one closed list of ledger entry kinds. A test walks the source tree and fails if any kind written
// anywhere is missing here, so a reader of a ledger always knows every shape it can meet.

export const LEDGER_KINDS = [
  "run_started",
  "run_resumed",
  "run_finished",
  "environment_started",
  "environment_stopped",
  "target_down",
  "phase_started",
  "phase_finished",
  "router_event",
  "router_effect",
  "agent_started",
  "agent_finished",
  "agent_failed",
  "agent_retried",
  "agent_dead_lettered",
  "agent_skipped",
  "tool_called",
  "tool_denied",
  "envelope_emitted",
  "envelope_held",
  "envelope_rejected",
  "artifact_written",
  "finding_reproduced",
  "ticket_filed",
  /** A ticket commented on, moved (closed, reopened) or linked by the tracker tools. */
  "ticket_updated",
  "review_recorded",
  "verdict_recorded",
  "escalation",
  "budget_exceeded",
  "hook_fired",
  "seat_notice",
  "decision_recorded",
  "warning",
] as const;

export type LedgerKind = (typeof LEDGER_KINDS)[number];

export interface LedgerEntry<Data = Record<string, unknown>> {
  seq: number;
  at: string;
  kind: LedgerKind;
  agent?: string;
  data: Data;
}

export function isLedgerKind(kind: string): kind is LedgerKind {
  return (LEDGER_KINDS as readonly string[]).includes(kind);
}
