import type { GuardedAction } from "../../guardrails/actions.ts";
import type { ToolContext } from "../context.ts";

/**
 * What a live probe of the whole target does, for the guardrails: requests to the target, judged by its
 * base URL (origin, mode). The probe's own client keeps writes to what the target allows.
 */
export function liveActions(_input: unknown, context: ToolContext): GuardedAction[] {
  const url = context.target?.profile.environment.base_url ?? context.systemMap()?.base_url ?? "";
  return [{ kind: "http_request", method: "GET", url }];
}
