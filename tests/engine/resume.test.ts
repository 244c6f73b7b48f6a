import { spawn, spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RunStore } from "../../src/store/run-store.ts";
import { REPO_ROOT, tempProject } from "../support/temp-config.ts";

// Crash-only: a real `qaas run` process is SIGKILLed part-way and `qaas run --resume` finishes it from the
// ledger without redoing finished agents or storing a finding twice.

const emitting = (title: string, slow: boolean) => `
export default async function (session) {
  const artifact = await session.call("put_artifact", { name: "${title}.txt", content: "evidence" });
  await session.call("emit_envelope", {
    domain: "architecture",
    defect_class: "dead-code",
    title: "${title} is never imported",
    summary: "No entry point reaches it.",
    location: { kind: "file", value: "src/${title}.ts" },
    evidence: [{ kind: "artifact", description: "import graph", uri: artifact.data.uri }],
    reproduction: { steps: ["build the import graph"] },
    impact: "Dead weight.",
    severity: "low",
    confidence: 0.9,
  });
  ${slow ? 'if (process.env.QAAS_TEST_SLOW === "1") await new Promise((resolve) => setTimeout(resolve, 60_000));' : ""}
}
`;

function agentYaml(phase: string) {
  return {
    description: "resume test agent",
    layer: phase === "map" ? "map" : "discover",
    phase,
    tools: ["put_artifact", "emit_envelope"],
  };
}

describe("qaas run --resume", () => {
  it("continues a SIGKILLed run without redoing finished agents or refiling findings", async () => {
    const project = tempProject();
    project.addAgent({ name: "EARLY", yaml: agentYaml("map"), playbook: emitting("early", false) });
    project.addAgent({ name: "LATE", yaml: agentYaml("discover"), playbook: emitting("late", true) });
    project.addMode("crashy", { roster: ["EARLY", "LATE"] });
    const target = project.addTarget("static", { source: { path: "../.." }, environment: { mode: "none" } });
    const cli = path.join(REPO_ROOT, "bin/qaas.js");
    const args = [
      "--home",
      project.home,
      "run",
      "--mode",
      "crashy",
      "--target",
      target,
      "--config",
      project.configDir,
    ];

    const child = spawn(process.execPath, [cli, ...args, "--json"], {
      env: { ...process.env, QAAS_TEST_SLOW: "1" },
      stdio: "ignore",
    });
    const runId = await waitFor(() => {
      const runs = RunStore.list(project.home);
      if (runs.length === 0) return undefined;
      const store = RunStore.open(project.home, runs[0]!.id);
      const entries = store.readLedger().entries;
      const lateEmitted = entries.some(
        (entry) => entry.kind === "envelope_emitted" && entry.agent === "LATE",
      );
      return lateEmitted ? store.runId : undefined;
    });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));

    const killed = RunStore.open(project.home, runId).readLedger().entries;
    expect(killed.some((entry) => entry.kind === "run_finished")).toBe(false);

    const resumed = spawnSync(
      process.execPath,
      [cli, "--home", project.home, "run", "--resume", runId, "--json"],
      {
        encoding: "utf8",
        env: { ...process.env, QAAS_TEST_SLOW: "0" },
      },
    );
    expect(resumed.stderr).toBe("");
    expect(resumed.status).toBe(0);
    const report = JSON.parse(resumed.stdout);
    expect(report.status).toBe("completed");

    const store = RunStore.open(project.home, runId);
    const entries = store.readLedger().entries;
    const starts = (agent: string) =>
      entries.filter((entry) => entry.kind === "agent_started" && entry.data.agent === agent);
    expect(starts("EARLY")).toHaveLength(1);
    expect(starts("LATE").map((entry) => entry.data.attempt)).toEqual([0, 1]);
    expect(entries.filter((entry) => entry.kind === "run_resumed")).toHaveLength(1);
    expect(entries.at(-1)?.kind).toBe("run_finished");
    // One envelope per agent: the re-run LATE agent's identical finding was recognised, not stored again.
    expect(
      store
        .readEnvelopes()
        .map((envelope) => envelope.discovered_by)
        .sort(),
    ).toEqual(["EARLY", "LATE"]);
    expect(report.findings.total).toBe(2);
  }, 60_000);
});

async function waitFor<Value>(probe: () => Value | undefined, timeoutMs = 30_000): Promise<Value> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error("timed out waiting for the run to reach the point of the kill");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
