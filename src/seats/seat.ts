import type { ToolResult } from "../tools/result.ts";
import type { CallBudget } from "./call-budget.ts";

// The worker-seat contract, version 1. A seat runs one agent invocation to its end: the builtin seat by
// running the agent's playbook, a model seat by a tool-calling loop. Everything a seat may touch goes
// through `callTool`, which is guarded and ledgered by the runner — a seat cannot reach around it.

export const SEAT_SPECIFICATION_VERSION = "v1" as const;

/** A tool as a seat sees it: a name, what it does, and a JSON Schema for its input. */
export interface SeatTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface StopCheck {
  /** false: the agent may not finish yet; `reason` is said to it once, then a stuck agent is let go. */
  allow: boolean;
  reason?: string;
}

export interface SeatRequest {
  agent: string;
  /** The agent's prompt plus the shared house rules. */
  system: string;
  /** The task of this invocation, rendered for a reader. */
  task: string;
  /** The same task as data (what playbooks read). */
  taskData: Record<string, unknown>;
  tools: SeatTool[];
  maxTurns: number;
  /** Absolute path of the playbook module, for the builtin seat. */
  playbook?: string;
  callTool(name: string, input: unknown): Promise<ToolResult>;
  /** Asked when the agent wants to finish (the `must_call` hook). */
  checkStop(): StopCheck;
  /** Progress lines for the terminal and the ledger. */
  log(message: string): void;
  signal: AbortSignal;
  /** The run's and the agent's caps, asked before every model call (seats without a model ignore it). */
  budget?: CallBudget;
}

export interface SeatUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface SeatWarning {
  type: "unsupported" | "notice";
  feature?: string;
  message: string;
}

export interface SeatResult {
  /** completed: the agent finished; max_turns: it ran out of turns; stopped: the stop hook let a stuck agent go. */
  outcome: "completed" | "max_turns" | "stopped";
  turns: number;
  usage: SeatUsage;
  costUsd: number;
  finalText?: string;
  warnings: SeatWarning[];
}

export interface WorkerSeat {
  readonly specificationVersion: typeof SEAT_SPECIFICATION_VERSION;
  readonly backend: string;
  readonly model: string;
  run(request: SeatRequest): Promise<SeatResult>;
}

/** Thrown by a seat for failures the router may retry (timeouts, 429, 5xx). */
export class TransientSeatError extends Error {
  override readonly name = "TransientSeatError";
}

/** A decision the orchestrator seat is asked for (a review gate, a final catch). */
export interface DecisionRequest {
  kind: "review_gate" | "final_catch" | "escalation";
  question: string;
  context: Record<string, unknown>;
  options: string[];
}

export type Decision =
  | { status: "decided"; choice: string; rationale: string }
  | { status: "abstained"; rationale: string }
  | { status: "failed"; error: string };

export interface OrchestratorSeat {
  readonly specificationVersion: typeof SEAT_SPECIFICATION_VERSION;
  readonly backend: string;
  decide(request: DecisionRequest): Promise<Decision>;
}
