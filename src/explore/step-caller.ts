import type { ToolContext } from "../tools/context.ts";
import { invokeTool } from "../tools/invoke-tool.ts";
import type { ToolResult } from "../tools/result.ts";

// Every browser step the walker takes goes through `invokeTool` — validation, check(), the ledger — exactly
// as an agent's would.

export type StepCaller = (tool: string, input: unknown) => Promise<ToolResult>;

export const EXPLORE_TOOLS = ["navigate", "locate", "act", "expect", "screenshot", "crawl"] as const;

export function guardedStepCaller(context: ToolContext, invocation: string): StepCaller {
  return (name, input) => invokeTool(name, input, context, invocation);
}
