import type { ToolResult } from "../tools/result.ts";

/**
 * What a builtin playbook gets: the task as data and the same guarded tool calls a model would make.
 * A playbook never imports the store, the ledger or a probe directly — only tools — so guardrails and
 * the ledger apply to it exactly as to a model.
 */
export interface PlaybookSession {
  agent: string;
  task: Record<string, unknown>;
  call<Data = unknown>(tool: string, input: unknown): Promise<ToolResult<Data>>;
  log(message: string): void;
  signal: AbortSignal;
}

export type Playbook = (session: PlaybookSession) => Promise<void>;

/** Playbook modules default-export their function through this, for the types. */
export function definePlaybook(playbook: Playbook): Playbook {
  return playbook;
}
