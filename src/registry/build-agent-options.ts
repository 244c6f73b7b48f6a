import { z } from "zod";
import { agentPrompt, type LoadedAgent } from "../config/load-config.ts";
import type { DefectEnvelope } from "../envelope/envelope.ts";
import type { DispatchInput } from "../router/run-state.ts";
import type { SeatTool } from "../seats/seat.ts";
import type { LoadedTarget } from "../tools/context.ts";
import { findTool } from "../tools/tool-registry.ts";
import { renderTask } from "./render-task.ts";

// Turns an agent's YAML into what a seat needs. Nothing here knows any agent by name: a new agent is a
// YAML file, a prompt and (for the builtin seat) a playbook.

export interface AgentOptions {
  agent: string;
  system: string;
  task: string;
  taskData: Record<string, unknown>;
  /** The allowlist exactly as the YAML declares it. */
  allowlist: string[];
  /** The allowlisted tools that exist in this version, as the seat sees them. */
  tools: SeatTool[];
  /** Allowlisted names with no implementation yet. */
  unavailableTools: string[];
  mustCall: string[];
  maxTurns: number;
  playbook: string | undefined;
}

export interface TaskInputs {
  runId: string;
  mode: string;
  invocation: string;
  input: DispatchInput;
  target: LoadedTarget | undefined;
  finding?: DefectEnvelope;
}

export function buildAgentOptions(loaded: LoadedAgent, inputs: TaskInputs): AgentOptions {
  const config = loaded.config;
  const system = agentPrompt(loaded);
  const tools: SeatTool[] = [];
  const unavailableTools: string[] = [];
  for (const name of config.tools) {
    const tool = findTool(name);
    if (!tool) {
      unavailableTools.push(name);
      continue;
    }
    tools.push({ name, description: tool.description, inputSchema: toJsonSchema(tool.input) });
  }
  const taskData = {
    run_id: inputs.runId,
    mode: inputs.mode,
    agent: config.name,
    invocation: inputs.invocation,
    ...inputs.input,
    target: describeTarget(inputs.target),
    ...(inputs.finding ? { finding: inputs.finding } : {}),
    tools: tools.map((tool) => tool.name),
    must_call: config.must_call,
    max_turns: config.max_turns,
    budget: config.budget,
  };
  return {
    agent: config.name,
    system,
    task: renderTask(taskData),
    taskData,
    allowlist: [...config.tools],
    tools,
    unavailableTools,
    mustCall: [...config.must_call],
    maxTurns: config.max_turns,
    playbook: loaded.playbookFile,
  };
}

/** What an agent may know of the target: how to reach it, never its secrets or its answer key. */
export function describeTarget(target: LoadedTarget | undefined): Record<string, unknown> | null {
  if (!target) return null;
  const profile = target.profile;
  return {
    name: profile.name,
    environment_mode: profile.environment.mode,
    base_url: profile.environment.base_url ?? null,
    writes_allowed: profile.environment.mode !== "external" || profile.environment.allow_writes,
    has_source: target.root !== undefined,
    openapi: profile.api?.openapi ?? null,
    ui_entry: profile.ui?.entry ?? null,
    websocket_paths: profile.websocket?.paths ?? [],
    database: profile.database?.kind ?? null,
    repro_branches: profile.vcs?.repro_branches ?? false,
    users: profile.users.map((user) => ({ name: user.name, role: user.role, tenant: user.tenant ?? null })),
  };
}

function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  try {
    const json = z.toJSONSchema(schema, { unrepresentable: "any", io: "input" }) as Record<string, unknown>;
    delete json.$schema;
    return json.type === undefined && Object.keys(json).length === 0 ? { type: "object" } : json;
  } catch {
    return { type: "object" };
  }
}
