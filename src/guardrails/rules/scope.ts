import type { AgentConfig } from "../../config/agent-schema.ts";
import type { SystemConfig } from "../../config/system-schema.ts";
import type { GuardState, LoadedTarget } from "../../tools/context.ts";
import type { GuardDecision, GuardRule } from "../actions.ts";

/** What a rule may look at: the agent, the run's configuration and target, and the guard counters. */
export interface GuardScope {
  agent: AgentConfig;
  system: SystemConfig;
  target: LoadedTarget | undefined;
  guard: GuardState;
}

export type Denial = Extract<GuardDecision, { allowed: false }>;

/** A rule answers a denial, or undefined when it has nothing against the action. */
export const deny = (rule: GuardRule, reason: string): Denial => ({ allowed: false, rule, reason });

export const ALLOWED: GuardDecision = { allowed: true };

/** Quotes a value an agent gave for a reason, cut short so a huge input cannot flood the reply. */
export function quote(value: string, limit = 160): string {
  const flat = value.replace(/\s+/g, " ").trim();
  return `"${flat.length > limit ? `${flat.slice(0, limit)}…` : flat}"`;
}
