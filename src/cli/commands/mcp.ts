import type { Command } from "commander";
import { resolveHome } from "../../store/home.ts";

export function register(program: Command): void {
  program
    .command("mcp")
    .description("Serve one agent's allowed tools over MCP (stdio), under the same guardrails.")
    .requiredOption("--agent <agent>", "the agent whose allowlist to serve")
    .requiredOption("--target <target>", "target profile name or path")
    .option("--config <dir>", "configuration folder")
    .action(async (options, command: Command) => {
      const { serveMcp } = await import("../../mcp/serve-mcp.ts");
      await serveMcp({
        home: resolveHome(command.optsWithGlobals().home),
        agent: options.agent,
        target: options.target,
        configDir: options.config,
      });
    });
}
