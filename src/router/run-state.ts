import type { Phase } from "../config/agent-schema.ts";

// The router's state and its vocabulary of events and effects. Everything here is plain serialisable
// data: each event and effect is written to the ledger, and replaying the events rebuilds the state.

export interface AgentPlan {
  name: string;
  phase: Phase;
  cardinality: "per_run" | "per_finding" | "per_ticket";
  exclusive: boolean;
  loopRole?: "verifier" | "fixer" | "reviewer";
  budget: { usd?: number; tokens?: number };
}

export interface RunPlan {
  agents: AgentPlan[];
  concurrency: number;
  budget: { usd?: number; tokens?: number };
  retries: { attempts: number; backoffMs: number };
  loop: { maxReopens: number; maxRoundTrips: number };
  /** Tickets handed to the run (`--ticket`), for modes that start at the verify loop. */
  tickets: Array<{ key: string; findingId?: string }>;
}

export interface DispatchInput {
  finding_id?: string;
  ticket?: string;
  /** The branch the agent works on: the fixer's branch for a re-verify or a review. */
  branch?: string;
  round?: number;
}

export interface Invocation {
  id: string;
  agent: string;
  phase: Phase;
  input: DispatchInput;
  attempt: number;
}

export type Verdict = "VERIFIED" | "NOT_FIXED" | "REGRESSED";
export type Review = "APPROVE" | "REQUEST_CHANGES" | "ESCALATE";

export interface TicketLoop {
  ticket: string;
  findingId?: string;
  stage: "verify" | "fix" | "review" | "done" | "escalated";
  reopens: number;
  roundTrips: number;
  fixBranch?: string;
  lastVerdict?: Verdict;
}

export interface Spend {
  usd: number;
  tokens: number;
}

export interface RunState {
  status: "idle" | "active" | "done" | "stopped";
  /** Why the run ended: completed, budget_exceeded. */
  endReason?: "completed" | "budget_exceeded";
  plan: RunPlan;
  phaseIndex: number;
  queue: Invocation[];
  running: Record<string, Invocation>;
  /** Invocation ids that ended, with how. */
  ended: Record<string, "completed" | "failed" | "skipped" | "dead_lettered" | "over_budget">;
  spend: Spend;
  agentSpend: Record<string, Spend>;
  findings: FindingState[];
  tickets: TicketLoop[];
  budgetExceeded: boolean;
  /** Agents whose own cap refused a model call: their queued invocations are not dispatched. */
  agentsOverBudget?: string[];
  nextInvocation: number;
}

export interface FindingState {
  id: string;
  fileable: boolean;
  /** Its replay takes long (a timing measured, a channel waited on): per-finding work on it starts first. */
  slow?: boolean;
}

export interface AgentOutcome {
  outcome: "completed" | "max_turns" | "stopped";
  costUsd: number;
  tokens: number;
  findings: FindingState[];
  verdict?: Verdict;
  review?: Review;
  branch?: string;
  ticketsFiled?: Array<{ key: string; findingId?: string }>;
  /** The seat refused a model call that could cross this cap: "run" ends the run, "agent" stops the agent. */
  budgetStop?: "run" | "agent";
}

export type RouterEvent =
  | { type: "run.start"; plan: RunPlan }
  | { type: "run.resume" }
  | { type: "agent.done"; invocation: string; result: AgentOutcome }
  | {
      type: "agent.failed";
      invocation: string;
      error: string;
      transient: boolean;
      costUsd?: number;
      tokens?: number;
    }
  | { type: "agent.skipped"; invocation: string; reason: string };

export type RouterEffect =
  | { type: "dispatch"; invocation: Invocation; delayMs: number }
  | { type: "record"; kind: RecordKind; data: Record<string, unknown> }
  | { type: "finish"; status: "completed" | "budget_exceeded" };

/** The ledger kinds the router itself writes through `record` effects. */
export type RecordKind =
  | "phase_started"
  | "phase_finished"
  | "budget_exceeded"
  | "escalation"
  | "agent_retried"
  | "agent_dead_lettered"
  | "agent_skipped";

export function initialState(): RunState {
  return {
    status: "idle",
    plan: {
      agents: [],
      concurrency: 1,
      budget: {},
      retries: { attempts: 0, backoffMs: 0 },
      loop: { maxReopens: 0, maxRoundTrips: 0 },
      tickets: [],
    },
    phaseIndex: -1,
    queue: [],
    running: {},
    ended: {},
    spend: { usd: 0, tokens: 0 },
    agentSpend: {},
    findings: [],
    tickets: [],
    budgetExceeded: false,
    nextInvocation: 1,
  };
}
