import type { z } from "zod";
import type { GuardedAction } from "../guardrails/actions.ts";
import type { ToolContext } from "./context.ts";
import type { ToolResult } from "./result.ts";

/**
 * One typed tool. `actions` says what a call would do so `check()` can judge it before `run` is reached;
 * tools never check permissions themselves.
 */
// biome-ignore lint/suspicious/noExplicitAny: tool lists mix input types; each tool is typed where it is defined.
export interface ToolDefinition<Input = any> {
  /** Globally unique snake_case name, e.g. `emit_envelope`; this is what allowlists name. */
  name: string;
  /** The server (group) it belongs to, e.g. `envelope`, `http`, `authz`. */
  server: string;
  description: string;
  input: z.ZodType<Input>;
  actions?: (input: Input, context: ToolContext) => GuardedAction[];
  run(input: Input, context: ToolContext): Promise<ToolResult>;
}

export function defineTool<Input>(tool: ToolDefinition<Input>): ToolDefinition<Input> {
  return tool;
}
