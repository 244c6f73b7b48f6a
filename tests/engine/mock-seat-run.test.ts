import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startRun } from "../../src/run/start-run.ts";
import { MockSeat, type MockSeatStep } from "../../src/seats/mock-seat.ts";
import { TransientSeatError } from "../../src/seats/seat.ts";
import { PROGRESS_FILE, RunStore } from "../../src/store/run-store.ts";
import { tempProject } from "../support/temp-config.ts";

// The real engine (router, runner, registry, guardrails, ledger) with MockSeats in the seats: scripted
// agents walk the verify loop, cross the budget and fail transiently, and the run records each properly.

function project() {
  const created = tempProject();
  const target = created.addTarget("static", { source: { path: "../.." }, environment: { mode: "none" } });
  return { ...created, target };
}

function seats(scripts: Record<string, MockSeat>) {
  return (_ref: unknown, agent: { config: { name: string } }) =>
    scripts[agent.config.name] ?? new MockSeat({ run: { script: [{ finish: "nothing to do" }] } });
}

describe("the engine with MockSeats", () => {
  it("walks the verify loop from verdicts recorded through tools, never from prose", async () => {
    const { home, configDir, target } = project();
    const verdict = (value: string): MockSeatStep => ({
      tool: "record_verdict",
      input: {
        ticket: "QA-1",
        verdict: value,
        branch: "fix/qa-1",
        test_run: { command: "npm test", passed: value === "VERIFIED" },
      },
    });
    const verifier = new MockSeat({ run: { script: [verdict("VERIFIED"), { finish: "verified" }] } });
    const { runId, report } = await startRun({
      home,
      configDir,
      mode: "fix-cycle",
      target,
      tickets: ["QA-1"],
      json: true,
      seatFactory: seats({ VERIFIER: verifier }),
    });
    expect(verifier.calls).toHaveLength(1);
    expect(verifier.calls[0]!.taskData).toMatchObject({ ticket: "QA-1" });
    expect(report.verdicts).toEqual([{ ticket: "QA-1", verdict: "VERIFIED", branch: "fix/qa-1" }]);
    expect(report.escalations).toEqual([]);
    const entries = RunStore.open(home, runId).readLedger().entries;
    expect(
      entries.filter((entry) => entry.kind === "agent_started").map((entry) => entry.data.agent),
    ).toEqual(["VERIFIER", "REPORTER"]);
  });

  it("escalates when the verifier finishes without a verdict, after the stop hook refused once", async () => {
    const { home, configDir, target } = project();
    const verifier = new MockSeat({
      run: { script: [{ finish: "looks fine to me" }, { finish: "really" }] },
    });
    const { report } = await startRun({
      home,
      configDir,
      mode: "fix-cycle",
      target,
      tickets: ["QA-2"],
      json: true,
      seatFactory: seats({ VERIFIER: verifier }),
    });
    expect(verifier.stopChecks.map((check) => check.allow)).toEqual([false, false]);
    expect(report.escalations).toEqual([
      expect.objectContaining({ ticket: "QA-2", reason: expect.stringMatching(/no verdict/) }),
    ]);
    expect(report.gate.status).toBe("attention");
  });

  it("stops at the run budget with partial results and a clear status", async () => {
    const { home, configDir, target, addMode } = project();
    addMode("tight", { roster: ["MAPPER", "API", "AUDITOR"], budget: { usd: 0.05 } });
    const spender = new MockSeat({
      run: {
        script: [{ usage: { inputTokens: 5000, outputTokens: 500 }, costUsd: 0.06 }, { finish: "done" }],
      },
    });
    const { runId, report } = await startRun({
      home,
      configDir,
      mode: "tight",
      target,
      json: true,
      seatFactory: seats({ MAPPER: spender }),
    });
    expect(report.status).toBe("budget_exceeded");
    expect(report.budget).toMatchObject({ cap_usd: 0.05, used_usd: 0.06, exceeded: true });
    const entries = RunStore.open(home, runId).readLedger().entries;
    expect(entries.find((entry) => entry.kind === "budget_exceeded")?.data).toMatchObject({ scope: "run" });
    expect(entries.some((entry) => entry.kind === "agent_started" && entry.data.agent === "API")).toBe(false);
    expect(entries.at(-1)?.data).toMatchObject({ status: "budget_exceeded" });
  });

  it("retries a transient seat failure, then dead-letters it, and the run goes on", async () => {
    const { home, configDir, target, addMode, patchSystem } = project();
    patchSystem((system) => {
      system.retries = { attempts: 1, backoff_ms: 1 };
    });
    addMode("flaky", { roster: ["MAPPER", "API"] });
    const flaky = new MockSeat({
      run: { script: [{ throw: new TransientSeatError("429 Too Many Requests") }] },
    });
    const api = new MockSeat({ run: { script: [{ finish: "nothing found" }] } });
    const { runId, report } = await startRun({
      home,
      configDir,
      mode: "flaky",
      target,
      json: true,
      seatFactory: seats({ MAPPER: flaky, API: api }),
    });
    expect(flaky.calls).toHaveLength(2);
    expect(report.dead_lettered).toEqual([{ agent: "MAPPER", error: "429 Too Many Requests" }]);
    expect(api.calls).toHaveLength(1);
    expect(report.status).toBe("completed");
    // Quiet on stderr (--json), yet the progress lines are kept with the run for a person to read later.
    const progress = fs.readFileSync(path.join(RunStore.open(home, runId).dir, PROGRESS_FILE), "utf8");
    expect(progress).toContain(`run ${runId}: mode flaky`);
    expect(progress).toContain("MAPPER gave up: 429 Too Many Requests");
  });
});
