import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startRun } from "../../src/run/start-run.ts";
import { BuiltinSeat } from "../../src/seats/builtin-seat.ts";
import { MockSeat } from "../../src/seats/mock-seat.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { tempProject } from "../support/temp-config.ts";
import { PAYLOAD } from "./report-fixtures.ts";

// The real engine with the builtin REPORTER: an agent emits findings through emit_envelope, then the
// REPORTER's playbook writes the four report files as artifacts of the run through the guarded tool.

function emitter(title: string) {
  const draft = (index: number) => ({
    tool: "emit_envelope",
    input: {
      domain: "architecture",
      defect_class: "dead-code",
      title: `${title} ${index}`,
      summary: `Nothing imports module ${index}.`,
      location: {
        kind: "file",
        value: `src/unused-${index}.js`,
        source: { file: `src/unused-${index}.js`, line: 1 },
      },
      evidence: [{ kind: "note", description: "import graph" }],
      reproduction: { steps: ["read the import graph"] },
      impact: "Dead code misleads readers.",
      severity: (["critical", "high", "medium", "low"] as const)[index % 4],
      confidence: 0.9,
    },
  });
  return new MockSeat({
    run: { script: [...Array.from({ length: 60 }, (_, index) => draft(index)), { finish: "done" }] },
  });
}

describe("the builtin REPORTER in a run", () => {
  it("writes report.html, report.sarif, report.junit.xml and summary.md as run artifacts, quickly", async () => {
    const { home, configDir, addTarget, addMode, addAgent } = tempProject();
    const target = addTarget("static", { source: { path: "../.." }, environment: { mode: "none" } });
    // An agent with turns enough to emit sixty findings.
    addAgent({
      name: "EMITTER",
      yaml: {
        description: "Emits findings for the report test.",
        layer: "discover",
        phase: "discover",
        cardinality: "per_run",
        max_turns: 80,
        tools: ["emit_envelope"],
      },
    });
    addMode("report-check", { roster: ["EMITTER", "REPORTER"] });
    const { runId } = await startRun({
      home,
      configDir,
      mode: "report-check",
      target,
      json: true,
      seatFactory: (_ref: unknown, agent: { config: { name: string } }) =>
        agent.config.name === "REPORTER" ? new BuiltinSeat() : emitter(`Module unused ${PAYLOAD}`),
    });
    const store = RunStore.open(home, runId);
    const entries = store.readLedger().entries;
    const reporterCall = entries.find(
      (entry) => entry.kind === "tool_called" && entry.data.tool === "write_run_reports",
    );
    expect(reporterCall?.data).toMatchObject({ ok: true });
    // 60 findings rendered in well under the two seconds the REPORTER is allowed.
    expect(Number(reporterCall?.data.duration_ms)).toBeLessThan(2000);
    for (const name of ["report.html", "report.sarif", "report.junit.xml", "summary.md"]) {
      expect(fs.existsSync(path.join(store.artifactsDir, name)), name).toBe(true);
    }
    const html = fs.readFileSync(path.join(store.artifactsDir, "report.html"), "utf8");
    expect(html).toContain("60 finding(s)");
    expect(html).not.toContain(PAYLOAD);
    const sarif = JSON.parse(fs.readFileSync(path.join(store.artifactsDir, "report.sarif"), "utf8"));
    expect(sarif.runs[0].results).toHaveLength(60);
    const reporter = entries.find(
      (entry) => entry.kind === "agent_finished" && entry.data.agent === "REPORTER",
    );
    expect(reporter?.data.outcome).toBe("completed");
  }, 60_000);
});
