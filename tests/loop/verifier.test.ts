import { describe, expect, it } from "vitest";
import verifier from "../../src/agents/playbooks/verifier.ts";
import { startRun } from "../../src/run/start-run.ts";
import { BuiltinSeat } from "../../src/seats/builtin-seat.ts";
import { MockSeat } from "../../src/seats/mock-seat.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { decisionTools } from "../../src/tools/servers/decisions-server.ts";
import { runPlaybookDirectly } from "../support/fake-run-context.ts";
import { tempProject } from "../support/temp-config.ts";
import { BRANCH, cleanFix, context, type Script, scripted } from "./loop-fixtures.ts";

// The builtin VERIFIER's verdict from scripted test and suite runs, and FIXER without a model seat.

describe("the builtin VERIFIER", () => {
  const verdictOf = async (task: Record<string, unknown>, script: Script) => {
    const run = context(cleanFix(), "VERIFIER");
    const calls = await runPlaybookDirectly(verifier, [...decisionTools, ...scripted(script)], run, task);
    const verdicts = run.entries
      .filter((entry) => entry.kind === "verdict_recorded")
      .map((entry) => entry.data);
    return { verdicts, tools: calls.map((call) => call.tool) };
  };
  const onBranch = { ticket: "QA-1", finding_id: "env-1", branch: BRANCH };

  it("reopens a ticket whose test still fails on the checkout before any fix exists", async () => {
    const { verdicts, tools } = await verdictOf(
      { ticket: "QA-1", finding_id: "env-1" },
      { series: [{ failed: 3 }] },
    );
    expect(verdicts).toEqual([expect.objectContaining({ verdict: "NOT_FIXED", branch: "HEAD" })]);
    expect(tools).not.toContain("spin_up");
  });

  it("verifies on the fixer's branch: the target from that branch, then the suite, the checkout restored", async () => {
    const { verdicts, tools } = await verdictOf(onBranch, { series: [{ failed: 0 }] });
    expect(verdicts).toEqual([
      expect.objectContaining({
        verdict: "VERIFIED",
        branch: BRANCH,
        test_run: expect.objectContaining({ passed: true }),
      }),
    ]);
    expect(tools).toEqual([
      "spin_up",
      "run_n_times",
      "tear_down",
      "run_suite",
      "run_suite",
      "record_verdict",
    ]);
  });

  it.each([
    { name: "the test failing once", script: { series: [{ failed: 1 }] }, verdict: "NOT_FIXED" },
    {
      name: "a new suite failure",
      script: { series: [{ failed: 0 }], suites: { branch: ["x"], checkout: [] } },
      verdict: "REGRESSED",
    },
    {
      name: "a branch the target does not start from",
      script: { series: [], spinUp: "the target did not start from qaas/fix-env-1: exit 1" },
      verdict: "REGRESSED",
    },
  ])("records $verdict for $name", async ({ script, verdict }) => {
    const { verdicts, tools } = await verdictOf(onBranch, script);
    expect(verdicts.map((entry) => entry.verdict)).toEqual([verdict]);
    expect(tools).toContain("tear_down");
  });

  it("records no verdict when the suite exists but cannot run: the ticket goes to a person", async () => {
    const { verdicts } = await verdictOf(onBranch, {
      series: [{ failed: 0 }],
      suites: { branch: [], checkout: [], branchTotal: 0 },
    });
    expect(verdicts).toEqual([]);
  });
});

describe("FIXER on the builtin seat", () => {
  it("is skipped with the reason, and the ticket goes to a person", async () => {
    const project = tempProject();
    const target = project.addTarget("static", { source: { path: "../.." }, environment: { mode: "none" } });
    const verifierSeat = new MockSeat({
      run: {
        script: [
          {
            tool: "record_verdict",
            input: {
              ticket: "QA-9",
              verdict: "NOT_FIXED",
              branch: "HEAD",
              test_run: { command: "t", passed: false },
            },
          },
          { finish: "still failing" },
        ],
      },
    });
    const { runId, report } = await startRun({
      home: project.home,
      configDir: project.configDir,
      mode: "fix-cycle",
      target,
      tickets: ["QA-9"],
      json: true,
      seatFactory: (_ref, agent) => (agent.config.name === "VERIFIER" ? verifierSeat : new BuiltinSeat()),
    });
    const entries = RunStore.open(project.home, runId).readLedger().entries;
    const skipped = entries.find((entry) => entry.kind === "agent_skipped");
    expect(skipped?.data).toMatchObject({
      agent: "FIXER",
      reason: expect.stringMatching(/FIXER has no builtin playbook; give it a model seat/),
    });
    expect(report.escalations).toEqual([
      expect.objectContaining({ ticket: "QA-9", reason: expect.stringMatching(/FIXER was skipped/) }),
    ]);
  });
});
