import type { AgentConfig } from "../config/agent-schema.ts";
import type { GuardState, ToolContext } from "../tools/context.ts";
import type { ToolDefinition } from "../tools/tool.ts";
import type { GuardDecision, GuardedAction } from "./actions.ts";
import { judgeBranch } from "./rules/branches.ts";
import { judgeUiAction } from "./rules/destructive-ui.ts";
import { changedFileKey, judgeDiffBudget } from "./rules/diff-budget.ts";
import { judgeHttpRequest } from "./rules/external-writes.ts";
import { judgeShell } from "./rules/forbidden-command.ts";
import { judgeForbiddenPath } from "./rules/forbidden-path.ts";
import { judgeDraft, judgeForcePush, judgeMerge } from "./rules/git-writes.ts";
import { judgeAnswerKey } from "./rules/golden-ledger.ts";
import { judgeImmutableTest } from "./rules/immutable-test.ts";
import type { Denial, GuardScope } from "./rules/scope.ts";
import { ALLOWED, deny } from "./rules/scope.ts";
import { judgeTicket } from "./rules/ticket-cap.ts";
import { judgeToolAllowed } from "./rules/tool-allowlist.ts";
import { judgeWriteScope, resolveWrite } from "./rules/write-scope.ts";

// The one gate every tool call passes before it runs. A prompt asks; this enforces. It is pure apart
// from looking up real paths on disk, never throws (a fault while judging is a denial), and does not
// change the guard counters: the runner calls noteAllowed once the call has succeeded.

/**
 * Judges one tool call: the tool must be in the agent's allowlist, then every action the tool says the
 * call would take is judged in order; the first denial wins. `input` is the call's parsed input.
 */
export function check(
  agent: AgentConfig,
  tool: ToolDefinition,
  input: unknown,
  context: ToolContext,
): GuardDecision {
  try {
    const notListed = judgeToolAllowed(agent, tool.name);
    if (notListed !== undefined) return notListed;
    const actions = tool.actions?.(input, context) ?? [];
    if (!Array.isArray(actions)) {
      return fault(agent, tool.name, "its description of the call is not a list of actions");
    }
    // Actions of one call are judged together: three files written by one call count as three.
    const scope = scopeOf(agent, context, cloneGuard(context.guard));
    for (const action of actions) {
      const denial = judgeAction(action, scope);
      if (denial !== undefined) return denial;
      countAction(action, scope.guard, context);
    }
    return ALLOWED;
  } catch (error) {
    return fault(agent, tool.name, error instanceof Error ? error.message : String(error));
  }
}

/** Judges one action against the agent's policy and the run's guard counters as they stand. */
export function checkAction(agent: AgentConfig, action: GuardedAction, context: ToolContext): GuardDecision {
  try {
    return judgeAction(action, scopeOf(agent, context, context.guard)) ?? ALLOWED;
  } catch (error) {
    return fault(agent, String(action?.kind), error instanceof Error ? error.message : String(error));
  }
}

/** After a call succeeded: counts its written files and changed lines, and its tickets, on `context.guard`. */
export function noteAllowed(actions: GuardedAction[], context: ToolContext): void {
  for (const action of actions) countAction(action, context.guard, context);
}

function countAction(action: GuardedAction, guard: GuardState, context: ToolContext): void {
  if (action.kind === "write_file") {
    const key = changedFileKey(action.path, context.target);
    const lines = Number.isFinite(action.changedLines) ? Math.max(0, action.changedLines) : 0;
    guard.filesChanged.set(key, (guard.filesChanged.get(key) ?? 0) + lines);
  } else if (action.kind === "ticket_create") {
    guard.ticketsFiled += 1;
  }
}

function judgeAction(action: GuardedAction, scope: GuardScope): Denial | undefined {
  switch (action?.kind) {
    case "read_file":
      return judgeAnswerKey(action.path, "read", scope);
    case "write_file":
      return (
        judgeWrite(action.path, "write", scope) ?? judgeDiffBudget(action.path, action.changedLines, scope)
      );
    case "git_branch":
      return judgeBranch(action.branch, "create or switch to", scope);
    case "git_commit": {
      const branch = judgeBranch(action.branch, "commit to", scope);
      if (branch !== undefined) return branch;
      if (!Array.isArray(action.paths)) return judgeWrite(String(action.paths), "commit", scope);
      for (const file of action.paths) {
        const denial = judgeWrite(file, "commit", scope);
        if (denial !== undefined) return denial;
      }
      return undefined;
    }
    case "git_push":
      return judgeBranch(action.branch, "push", scope) ?? judgeForcePush(action.branch, action.force, scope);
    case "git_merge":
      return judgeMerge(action.branch, scope);
    case "shell":
      return judgeShell(action.command, scope);
    case "ticket_create":
      return judgeTicket(scope);
    case "http_request":
      return judgeHttpRequest(action.method, action.url, scope);
    case "pull_request":
      return (
        judgeBranch(action.branch, "open a pull request from", scope) ??
        judgeDraft(action.branch, action.draft, scope)
      );
    case "ui_action":
      return judgeHttpRequest("GET", action.url, scope) ?? judgeUiAction(action, scope);
    default:
      // An action the guardrails do not know cannot be shown to be safe.
      return deny(
        "tool-allowlist",
        `${scope.agent.name} may not take the action ${JSON.stringify((action as { kind?: unknown })?.kind)}: the guardrails do not know it, so it cannot be judged. Use another tool.`,
      );
  }
}

/** The checks every changed path passes, in order: where it lands, the answer key, path classes, scope, the test. */
function judgeWrite(candidate: string, verb: string, scope: GuardScope): Denial | undefined {
  const resolved = resolveWrite(candidate, verb, scope);
  if ("allowed" in resolved) return resolved;
  return (
    judgeAnswerKey(candidate, verb, scope) ??
    judgeForbiddenPath(resolved, verb, scope) ??
    judgeWriteScope(resolved, verb, scope) ??
    judgeImmutableTest(resolved, verb, scope)
  );
}

function scopeOf(agent: AgentConfig, context: ToolContext, guard: GuardState): GuardScope {
  return { agent, system: context.system, target: context.target, guard };
}

function cloneGuard(guard: GuardState): GuardState {
  return { ...guard, filesChanged: new Map(guard.filesChanged) };
}

/** A fault while judging is a denial: what cannot be judged does not run. */
function fault(agent: AgentConfig, subject: string, message: string): Denial {
  return deny(
    "tool-allowlist",
    `${agent?.name ?? "The agent"} may not call ${subject}: the guardrails could not judge the call (${message}), and what cannot be judged does not run. Check the input and try again, or use another tool.`,
  );
}
