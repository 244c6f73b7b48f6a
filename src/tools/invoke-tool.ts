import { check, noteAllowed } from "../guardrails/check.ts";
import { CATALOG_TOOL_NAMES } from "./catalog.ts";
import type { ToolContext } from "./context.ts";
import { err, type ToolResult } from "./result.ts";
import { findTool } from "./tool-registry.ts";

/**
 * The one path from an agent to a tool: input validated, `check()` first, denials returned as reasons and
 * ledgered, failures turned into `err` — a tool call never crashes the run.
 */
export async function invokeTool(
  name: string,
  input: unknown,
  context: ToolContext,
  invocation: string,
): Promise<ToolResult> {
  const agent = context.agent.name;
  const tool = findTool(name);
  // The allowlist before anything else: a tool the agent may not use tells it nothing, not even its schema.
  if (!context.agent.tools.includes(name)) {
    const reason = `${name} is not in ${agent}'s allowlist; allowed: ${context.agent.tools.join(", ") || "(none)"}`;
    context.record("tool_denied", { tool: name, invocation, rule: "tool-allowlist", reason }, agent);
    return err(`denied by guardrail tool-allowlist: ${reason}`, { rule: "tool-allowlist" });
  }
  if (!tool) {
    const reason = CATALOG_TOOL_NAMES.has(name)
      ? `${name} is not available in this version of qaas yet`
      : `there is no tool named ${name}; your tools are: ${context.agent.tools.join(", ")}`;
    context.record("tool_called", { tool: name, invocation, ok: false, error: reason }, agent);
    return err(reason);
  }
  const parsed = tool.input.safeParse(input ?? {});
  if (!parsed.success) {
    const errors = parsed.error.issues.map(
      (issue) => `${issue.path.join(".") || "(input)"}: ${issue.message}`,
    );
    context.record(
      "tool_called",
      { tool: name, invocation, ok: false, error: "invalid input", errors },
      agent,
    );
    return err(`invalid input for ${name}: ${errors.join("; ")}`, { errors });
  }
  const decision = check(context.agent, tool, parsed.data, context);
  if (!decision.allowed) {
    context.record(
      "tool_denied",
      { tool: name, invocation, rule: decision.rule, reason: decision.reason },
      agent,
    );
    return err(`denied by guardrail ${decision.rule}: ${decision.reason}`, { rule: decision.rule });
  }
  const started = Date.now();
  let result: ToolResult;
  try {
    result = await tool.run(parsed.data, context);
  } catch (error) {
    result = err(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (result.ok) noteAllowed(tool.actions?.(parsed.data, context) ?? [], context);
  context.record(
    "tool_called",
    {
      tool: name,
      invocation,
      ok: result.ok,
      duration_ms: Date.now() - started,
      ...(result.ok ? {} : { error: result.error }),
      ...probeStatsOf(result),
    },
    agent,
  );
  return result;
}

/**
 * A probe's own counts (requests by status, skipped writes, operations paced as slow, its notes) go into
 * the ledger beside the call, so "why did this probe find nothing in this run" can be answered afterwards.
 */
function probeStatsOf(result: ToolResult): { stats?: unknown } {
  const holder = result.ok ? result.data : result.details;
  if (holder === null || typeof holder !== "object" || !("stats" in holder)) return {};
  const stats = holder.stats;
  return stats !== null && typeof stats === "object" ? { stats } : {};
}
