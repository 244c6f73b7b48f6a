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
  /** One bug-bash charter walked in its own browser session: persona, charter, how it ended, what it found. */
  "charter_session",
  /** A bug-bash candidate after merging the sessions: pending its repro test, or rejected already. */
  "bash_candidate",
  /** A bug-bash candidate confirmed by its failing repro test, or rejected with the reason. */
  "bash_verdict",
  /** Queue mode: an invocation handed to the job queue (`src/queue/`), and its job settled by a worker. */
  "job_enqueued",
  "job_finished",
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
