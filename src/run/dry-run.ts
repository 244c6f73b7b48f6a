import { loadConfig } from "../config/load-config.ts";
import { buildAgentOptions } from "../registry/build-agent-options.ts";
import { loadTarget } from "../targets/load-target.ts";
import { buildPlan } from "./build-plan.ts";
import { parseSeatOption } from "./seat-resolver.ts";

export interface DryRunAgent {
  agent: string;
  phase: string;
  cardinality: string;
  seat: string;
  model: string | null;
  budget: { usd?: number; tokens?: number };
  max_turns: number;
  allowlist: string[];
  tools: string[];
  unavailable_tools: string[];
  must_call: string[];
  playbook: string | null;
  prompt: string;
  task: string;
}

/** What a run would do, agent by agent, without starting anything or calling any seat. */
export function dryRun(options: {
  configDir?: string;
  mode: string;
  target: string;
  agents?: string[];
  seat?: string;
}): { mode: string; target: string; agents: DryRunAgent[] } {
  const config = loadConfig(options.configDir);
  const target = loadTarget(options.target, { configDir: config.dir });
  const plan = buildPlan(config, { mode: options.mode, only: options.agents });
  const override = options.seat ? parseSeatOption(options.seat, config) : undefined;
  const agents = plan.agents.map((planned, index) => {
    const loaded = config.agents.get(planned.name)!;
    const seat = override ?? loaded.config.seat ?? config.system.seats.worker;
    const built = buildAgentOptions(loaded, {
      runId: "dry-run",
      mode: options.mode,
      invocation: `${planned.name.toLowerCase()}-${index + 1}`,
      input: planned.cardinality === "per_finding" ? { finding_id: "<each fileable finding>" } : {},
      target,
    });
    return {
      agent: planned.name,
      phase: planned.phase,
      cardinality: planned.cardinality,
      seat: seat.backend,
      model: seat.model ?? null,
      budget: planned.budget,
      max_turns: built.maxTurns,
      allowlist: built.allowlist,
      tools: built.tools.map((tool) => tool.name),
      unavailable_tools: built.unavailableTools,
      must_call: built.mustCall,
      playbook: built.playbook ?? null,
      prompt: built.system,
      task: built.task,
    };
  });
  return { mode: options.mode, target: target.profile.name, agents };
}

export function renderDryRun(result: ReturnType<typeof dryRun>): string {
  const lines = [
    `Dry run: mode ${result.mode}, target ${result.target}, ${result.agents.length} agent(s). Nothing was called.`,
  ];
  for (const agent of result.agents) {
    lines.push(
      "",
      `${"=".repeat(20)} ${agent.agent} (${agent.phase}, ${agent.cardinality}) ${"=".repeat(20)}`,
      `seat: ${agent.seat}${agent.model ? ` (${agent.model})` : ""}`,
      `budget: ${JSON.stringify(agent.budget)}  max_turns: ${agent.max_turns}`,
      `allowlist: ${agent.allowlist.join(", ") || "(none)"}`,
      `tools available: ${agent.tools.join(", ") || "(none)"}`,
      ...(agent.unavailable_tools.length > 0
        ? [`not yet available: ${agent.unavailable_tools.join(", ")}`]
        : []),
      `must_call: ${agent.must_call.join(", ") || "(none)"}`,
      `playbook: ${agent.playbook ?? "(none: skipped on the builtin seat)"}`,
      "--- prompt ---",
      agent.prompt,
      "--- task ---",
      agent.task,
    );
  }
  return `${lines.join("\n")}\n`;
}
