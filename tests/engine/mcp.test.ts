import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { describe, expect, it } from "vitest";
import { serveMcp } from "../../src/mcp/serve-mcp.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { tempProject } from "../support/temp-config.ts";

describe("qaas mcp", () => {
  it("serves exactly the agent's implemented allowlist, through the same guarded path", async () => {
    const project = tempProject();
    project.addAgent({
      name: "REMOTE",
      yaml: {
        description: "driven by an outside harness",
        layer: "discover",
        phase: "discover",
        tools: ["emit_envelope", "list_findings", "fingerprint_envelope"],
      },
    });
    const target = project.addTarget("static", { source: { path: "../.." }, environment: { mode: "none" } });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const served = await serveMcp({
      home: project.home,
      agent: "REMOTE",
      target,
      configDir: project.configDir,
      transport: serverTransport,
    });
    const client = new Client({ name: "harness", version: "1.0.0" });
    await client.connect(clientTransport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((tool) => tool.name).sort()).toEqual([
        "emit_envelope",
        "fingerprint_envelope",
        "list_findings",
      ]);

      const invalid = await client.callTool({
        name: "emit_envelope",
        arguments: { domain: "api", defect_class: "xss" },
      });
      expect(invalid.isError).toBe(true);
      expect(JSON.stringify(invalid.content)).toMatch(/defect_class|title|summary/);

      const listed = await client.callTool({ name: "list_findings", arguments: {} });
      expect(listed.isError).toBeFalsy();
      expect(JSON.stringify(listed.content)).toContain("findings");

      const entries = RunStore.open(project.home, served.runId).readLedger().entries;
      expect(
        entries.filter((entry) => entry.kind === "tool_called").map((entry) => entry.data.tool),
      ).toContain("list_findings");
    } finally {
      await client.close();
      await served.close();
    }
  });
});
