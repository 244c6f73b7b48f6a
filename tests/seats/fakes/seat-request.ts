import type { SeatRequest, SeatTool, StopCheck } from "../../../src/seats/seat.ts";
import type { ToolResult } from "../../../src/tools/result.ts";
import { ok } from "../../../src/tools/result.ts";

// A SeatRequest for seat tests, standing in for the runner: it answers tool calls from a table (or a
// function), records every call, and plays the `must_call` stop hook.

export interface RecordingSeatRequest extends SeatRequest {
  toolCalls: Array<{ name: string; input: unknown }>;
  stopChecks: StopCheck[];
  logs: string[];
}

export interface SeatRequestOptions {
  agent?: string;
  system?: string;
  task?: string;
  taskData?: Record<string, unknown>;
  tools?: SeatTool[];
  maxTurns?: number;
  playbook?: string;
  /** Answers per tool name; a missing name answers ok({ echoed: input }). */
  answers?: Record<string, ToolResult | ((input: unknown) => ToolResult | Promise<ToolResult>)>;
  /** Tools that must have been called before the agent may finish. */
  mustCall?: string[];
  signal?: AbortSignal;
}

export const objectSchema = (properties: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: "object",
  properties,
  additionalProperties: false,
});

export function seatTool(name: string, properties: Record<string, unknown> = {}): SeatTool {
  return { name, description: `the ${name} tool`, inputSchema: objectSchema(properties) };
}

export function recordingSeatRequest(options: SeatRequestOptions = {}): RecordingSeatRequest {
  const toolCalls: Array<{ name: string; input: unknown }> = [];
  const stopChecks: StopCheck[] = [];
  const logs: string[] = [];
  const mustCall = options.mustCall ?? [];
  return {
    agent: options.agent ?? "TESTER",
    system: options.system ?? "You are a test agent.",
    task: options.task ?? "Test the thing.",
    taskData: options.taskData ?? { thing: "under test" },
    tools: options.tools ?? [],
    maxTurns: options.maxTurns ?? 10,
    ...(options.playbook === undefined ? {} : { playbook: options.playbook }),
    signal: options.signal ?? new AbortController().signal,
    toolCalls,
    stopChecks,
    logs,
    async callTool(name, input) {
      toolCalls.push({ name, input });
      const answer = options.answers?.[name];
      if (answer === undefined) return ok({ echoed: input });
      return typeof answer === "function" ? answer(input) : answer;
    },
    checkStop() {
      const missing = mustCall.filter((name) => !toolCalls.some((call) => call.name === name));
      const check: StopCheck =
        missing.length === 0
          ? { allow: true }
          : { allow: false, reason: `You must call ${missing.join(", ")} before finishing.` };
      stopChecks.push(check);
      return check;
    },
    log(message) {
      logs.push(message);
    },
  };
}
