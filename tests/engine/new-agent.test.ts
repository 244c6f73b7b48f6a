import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startRun } from "../../src/run/start-run.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { tempProject } from "../support/temp-config.ts";

// Agents are data: an agent that did not exist when the router, runner, registry and guardrails were
// written runs end to end from a YAML file, a prompt and a playbook dropped into a config folder.

const playbook = `
export default async function (session) {
  const artifact = await session.call("put_artifact", { name: "exchange.txt", content: "GET /things/abc -> 500" });
  if (!artifact.ok) throw new Error(artifact.error);
  const emitted = await session.call("emit_envelope", {
    domain: "api",
    defect_class: "unhandled-error",
    title: "Reading a thing by a non-numeric id answers 500",
    summary: "The server fails instead of answering 400 or 404.",
    location: { kind: "endpoint", value: "GET /things/{id}" },
    evidence: [{ kind: "artifact", description: "the exchange", uri: artifact.data.uri }],
    reproduction: { steps: ["GET /things/abc"] },
    impact: "Clients see a server error.",
    severity: "medium",
    confidence: 0.9,
  });
  session.log(emitted.ok ? "emitted " + emitted.data.envelope_id : "refused " + emitted.error);
  const denied = await session.call("create_issue", { title: "not mine to file" });
  session.log(denied.ok ? "filed?!" : denied.error);
}
`;

describe("a new agent needs no engine change", () => {
  it("runs a YAML + prompt + playbook agent dropped into a temp config", async () => {
    const project = tempProject();
    project.addAgent({
      name: "SPOTTER",
      yaml: {
        description: "A test agent added after the engine was written.",
        layer: "discover",
        phase: "discover",
        max_turns: 5,
        tools: ["put_artifact", "emit_envelope"],
      },
      playbook,
    });
    project.addMode("solo", { roster: ["SPOTTER"], budget: { usd: 1 } });
    const targetFile = project.addTarget("static", {
      source: { path: "../.." },
      environment: { mode: "none" },
    });

    const { runId, report } = await startRun({
      home: project.home,
      configDir: project.configDir,
      mode: "solo",
      target: targetFile,
      json: true,
    });

    expect(report.status).toBe("completed");
    expect(report.agents).toEqual([
      expect.objectContaining({ agent: "SPOTTER", invocations: 1, outcomes: { completed: 1 } }),
    ]);
    expect(report.findings.items).toEqual([
      expect.objectContaining({
        domain: "api",
        defect_class: "unhandled-error",
        state: "unfiled",
        discovered_by: "SPOTTER",
      }),
    ]);
    const store = RunStore.open(project.home, runId);
    const { entries } = store.readLedger();
    const kinds = entries.map((entry) => entry.kind);
    expect(kinds[0]).toBe("run_started");
    expect(kinds).toContain("agent_started");
    expect(kinds).toContain("envelope_emitted");
    expect(kinds.at(-1)).toBe("run_finished");
    // The guardrail denial came back to the agent as a reason and is in the ledger.
    expect(entries.find((entry) => entry.kind === "tool_denied")?.data).toMatchObject({
      tool: "create_issue",
      rule: "tool-allowlist",
    });
    // The agent's full task is stored as an artifact.
    const started = entries.find((entry) => entry.kind === "agent_started")!;
    const task = fs.readFileSync(store.resolveArtifact(String(started.data.task_artifact)), "utf8");
    expect(task).toContain("# Task for SPOTTER");
    expect(fs.existsSync(path.join(store.dir, "report.json"))).toBe(true);
  });
});
