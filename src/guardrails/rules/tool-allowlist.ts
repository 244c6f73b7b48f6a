import type { AgentConfig } from "../../config/agent-schema.ts";
import type { Denial } from "./scope.ts";
import { deny } from "./scope.ts";

// tool-allowlist: an agent calls only the tools its YAML lists.

export function judgeToolAllowed(agent: AgentConfig, toolName: string): Denial | undefined {
  if (agent.tools.includes(toolName)) return undefined;
  const allowed =
    agent.tools.length > 0 ? `Its tools are: ${agent.tools.join(", ")}.` : "It may call no tools.";
  return deny(
    "tool-allowlist",
    `${agent.name} may not call ${toolName}: it is not in this agent's tool allowlist. ${allowed} Use one of those instead.`,
  );
}
