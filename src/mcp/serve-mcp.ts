import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ZodObject } from "zod";
import { z } from "zod";
import { loadConfig } from "../config/load-config.ts";
import { QaasError } from "../errors.ts";
import { DefectMemory } from "../memory/defect-memory.ts";
import { createRunContext } from "../run/run-context.ts";
import { RunStore } from "../store/run-store.ts";
import { SystemMapStore } from "../store/system-map-store.ts";
import { loadTarget } from "../targets/load-target.ts";
import type { ToolContext } from "../tools/context.ts";
import { invokeTool } from "../tools/invoke-tool.ts";
import { findTool } from "../tools/tool-registry.ts";

// `qaas mcp --agent A`: that agent's allowed tools over MCP, so any MCP-capable harness can drive them.
// Calls go through the same invokeTool as every seat: same guardrails, same ledger (a run of mode "mcp").

export interface McpOptions {
  home: string;
  agent: string;
  target: string;
  configDir?: string;
  /** Tests connect an in-memory transport; the CLI uses stdio. */
  transport?: Transport;
}

export async function serveMcp(
  options: McpOptions,
): Promise<{ server: McpServer; runId: string; close(): Promise<void> }> {
  const config = loadConfig(options.configDir);
  const loaded = config.agents.get(options.agent.toUpperCase());
  if (!loaded) {
    throw new QaasError(
      "UNKNOWN_AGENT",
      `no agent ${options.agent}; agents: ${[...config.agents.keys()].join(", ")}`,
    );
  }
  const target = loadTarget(options.target, { configDir: config.dir });
  const store = RunStore.create(options.home, { mode: "mcp", target: target.profile.name });
  store.append("run_started", {
    run_id: store.runId,
    mode: "mcp",
    target: target.profile.name,
    target_file: target.file,
    roster: [loaded.config.name],
  });
  const maps = new SystemMapStore(options.home);
  const latest = maps.latest(target.profile.name);
  if (latest) maps.pin(store, target.profile.name, latest.version);
  const memory = DefectMemory.open(options.home);
  const controller = new AbortController();
  const context = createRunContext({
    store,
    system: config.system,
    target,
    memory,
    maps,
    signal: controller.signal,
  });
  const toolContext: ToolContext = {
    ...context,
    agent: loaded.config,
    guard: { ticketsFiled: 0, filesChanged: new Map() },
  };

  const server = new McpServer({ name: `qaas-${loaded.config.name.toLowerCase()}`, version: "0.1.0" });
  for (const name of loaded.config.tools) {
    const tool = findTool(name);
    if (!tool) continue;
    const inputSchema = isObjectSchema(tool.input) ? tool.input : z.object({}).passthrough();
    server.registerTool(name, { description: tool.description, inputSchema }, async (input: unknown) => {
      const result = await invokeTool(name, input, toolContext, "mcp");
      return {
        content: [
          { type: "text" as const, text: JSON.stringify(result.ok ? result.data : { error: result.error }) },
        ],
        isError: !result.ok,
      };
    });
  }
  await server.connect(options.transport ?? new StdioServerTransport());
  return {
    server,
    runId: store.runId,
    async close() {
      await server.close();
      memory.close();
    },
  };
}

function isObjectSchema(schema: unknown): schema is ZodObject {
  return typeof schema === "object" && schema !== null && "shape" in schema;
}
