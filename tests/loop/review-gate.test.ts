import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import reviewer from "../../src/agents/playbooks/reviewer.ts";
import verifier from "../../src/agents/playbooks/verifier.ts";
import { type DefectEnvelope, ENVELOPE_VERSION } from "../../src/envelope/envelope.ts";
import { startRun } from "../../src/run/start-run.ts";
import { BuiltinSeat } from "../../src/seats/builtin-seat.ts";
import { MockSeat } from "../../src/seats/mock-seat.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { err, ok, type ToolResult } from "../../src/tools/result.ts";
import { decisionTools } from "../../src/tools/servers/decisions-server.ts";
import { reviewTools } from "../../src/tools/servers/review-server.ts";
import { defineTool, type ToolDefinition } from "../../src/tools/tool.ts";
import { callTool, fakeRunContext, runPlaybookDirectly, testAgent } from "../support/fake-run-context.ts";
import { tempProject } from "../support/temp-config.ts";

// The builtin REVIEWER and VERIFIER decide from tool answers alone: the branch diff as git has it (judged
// by the guardrail rules), and the test and suite runs. Test runs are scripted here; the diff is real.

const BRANCH = "qaas/fix-env-1";
const TEST_PATH = "tests/qaas/records.test.mjs";

function repository(change: (root: string) => void): string {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-review-"));
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(top, file)), { recursive: true });
    fs.writeFileSync(path.join(top, file), text);
  };
  write("src/records.js", 'app.get("/records/:id", (request) => find(request.params.id));\n');
  write("src/auth/login.js", "export const login = () => true;\n");
  write("docs/notes.md", "notes\n");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: top, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start");
  git("checkout", "-q", "-b", BRANCH);
  change(top);
  git("add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fix");
  git("checkout", "-q", "main");
  return top;
}

function finding(): DefectEnvelope {
  return {
    envelope_version: ENVELOPE_VERSION,
    id: "env-1",
    run_id: "run-test",
    discovered_by: "API",
    discovered_at: new Date().toISOString(),
    domain: "security",
    defect_class: "broken-object-authorization",
    title: "A record of another tenant is readable",
    summary: "s",
    location: { kind: "endpoint", value: "GET /records/{id}" },
    evidence: [{ kind: "note", description: "n" }],
    reproduction: {
      steps: ["GET /records/1"],
      test: { path: TEST_PATH, command: `node --test ${TEST_PATH}` },
    },
    impact: "i",
    severity: "high",
    confidence: 0.9,
    suggested_owner: null,
    suggested_fix_area: null,
    autonomy_eligible: false,
    dedupe: { fingerprint: "fp_x" },
    tracker: { state: "filed", key: "QA-1", url: null },
  };
}

function context(root: string, agent = "REVIEWER") {
  const profile = TargetProfileSchema.parse({
    name: "fake",
    source: { path: "." },
    environment: { mode: "managed", base_url: "http://127.0.0.1:9", start: { command: "true" } },
    tests: { command: "node --test", path: "tests" },
  });
  const run = fakeRunContext({
    agent: testAgent({
      name: agent,
      phase: "verify",
      layer: "remediate",
      // Without a run configuration to read the fixer's policy from, a review is held to its own.
      policy: {
        write_paths: [],
        branch_patterns: [],
        diff_budget: { files: 2, lines: 10 },
        immutable_test: false,
        may_file_tickets: false,
      },
    }),
    target: { profile, file: "/tmp/fake.yaml", root, goldenLedger: undefined },
  });
  run.system = { ...run.system, forbidden_paths: { auth: ["**/auth/**"] } };
  run.writeEnvelope(finding());
  return run;
}

interface Script {
  /** Failures of the finding's test per run_n_times call, in order: [checkout, branch]. */
  series: Array<{ failed: number; own_assertion?: boolean; reasons?: string[] }>;
  suites?: { branch: Array<string>; checkout: Array<string>; branchTotal?: number; checkoutTotal?: number };
  spinUp?: string;
}

/** Test runs as scripted answers, in the shape the test_runner and env_control tools give them. */
function scripted(script: Script): ToolDefinition[] {
  const series = [...script.series];
  const stub = (name: string, run: (input: { branch?: string }) => ToolResult) =>
    defineTool({ name, server: "stub", description: name, input: z.any(), run: async (input) => run(input) });
  return [
    stub("run_n_times", () => {
      const next = series.shift() ?? { failed: 0 };
      return ok({
        command: "node --test x",
        times: 1,
        failed: next.failed,
        passed: next.failed === 0 ? 1 : 0,
        own_assertion: next.failed > 0 && next.own_assertion !== false,
        reasons: next.reasons ?? (next.failed > 0 ? ["expected a denial"] : []),
        runs: [{ output_artifact: "artifact://run-test/x.tap" }],
      });
    }),
    stub("spin_up", () => (script.spinUp ? err(script.spinUp) : ok({}))),
    stub("tear_down", () => ok({ restored: true })),
    stub("run_suite", (input) => {
      const failed = input.branch ? (script.suites?.branch ?? []) : (script.suites?.checkout ?? []);
      const total = input.branch ? (script.suites?.branchTotal ?? 4) : (script.suites?.checkoutTotal ?? 4);
      return ok({
        passed: failed.length === 0,
        total,
        failed: failed.map((name) => ({ name })),
        timed_out: false,
        output_artifact: "artifact://run-test/suite.log",
      });
    }),
  ];
}

/** A fix of the finding's own file, inside every guardrail. */
const cleanFix = () =>
  repository((top) => {
    fs.writeFileSync(path.join(top, "src/records.js"), 'app.get("/records/:id", (r) => denyOthers(r));\n');
  });

const reviewTask = { ticket: "QA-1", finding_id: "env-1", branch: BRANCH };
const decisionOf = (run: ReturnType<typeof context>) => {
  const recorded = run.entries.filter((entry) => entry.kind === "review_recorded");
  expect(recorded).toHaveLength(1);
  return recorded[0]!.data as {
    decision: string;
    checks: Array<{ name: string; passed: boolean; detail: string }>;
  };
};
const failedChecks = (data: ReturnType<typeof decisionOf>) =>
  data.checks.filter((check) => !check.passed).map((check) => check.name);

describe("branch_diff and the REVIEWER gate", () => {
  it("judges a change made outside the guardrails by the same rules, and escalates a forbidden path untested", async () => {
    const root = repository((top) => {
      fs.writeFileSync(path.join(top, "src/records.js"), 'app.get("/records/:id", (r) => deny(r));\n');
      fs.writeFileSync(path.join(top, "src/auth/login.js"), "export const login = () => false;\n");
      fs.mkdirSync(path.join(top, "tests/qaas"), { recursive: true });
      fs.writeFileSync(path.join(top, TEST_PATH), "// passes now\n");
    });
    const run = context(root);
    const calls = await runPlaybookDirectly(
      reviewer,
      [...reviewTools, ...decisionTools, ...scripted({ series: [] })],
      run,
      reviewTask,
    );
    const diff = calls.find((call) => call.tool === "branch_diff")!.result;
    expect(diff).toMatchObject({ ok: true });
    const data = (diff as { data: { files: Array<Record<string, unknown>>; guardrails: unknown[] } }).data;
    expect(data.files).toEqual([
      expect.objectContaining({ path: "src/auth/login.js", added: 1, removed: 1, test: false }),
      expect.objectContaining({ path: "src/records.js", related: "serves /records/{id}" }),
      expect.objectContaining({ path: TEST_PATH, test: true }),
    ]);
    expect(data.guardrails).toEqual([
      expect.objectContaining({ path: "src/auth/login.js", rule: "forbidden-path" }),
      expect.objectContaining({ path: TEST_PATH, rule: "immutable-test" }),
    ]);
    const review = decisionOf(run);
    expect(review.decision).toBe("ESCALATE");
    // The auth file is also out of the finding's area; every broken rule is named, not only the first.
    expect(failedChecks(review)).toEqual(["forbidden-path", "immutable-test", "scope"]);
    // A person decides; no test run was spent on it.
    expect(calls.map((call) => call.tool)).toEqual(["branch_diff", "record_review"]);
  });

  it("refuses an APPROVE of a branch that breaks a guardrail, from any reviewer", async () => {
    const root = repository((top) => {
      fs.writeFileSync(path.join(top, "src/auth/login.js"), "export const login = () => false;\n");
    });
    const run = context(root);
    const recordReview = decisionTools.find((tool) => tool.name === "record_review")!;
    const review = (input: Record<string, unknown>) => callTool(recordReview, input, run);
    const approve = { ticket: "QA-1", decision: "APPROVE", branch: BRANCH, rationale: "looks fine" };
    const refused = await review(approve);
    expect(refused).toMatchObject({
      ok: false,
      error: expect.stringMatching(/APPROVE refused.*forbidden-path/),
    });
    expect(run.entries.filter((entry) => entry.kind === "review_recorded")).toEqual([]);
    const escalated = await review({ ...approve, decision: "ESCALATE" });
    expect(escalated).toMatchObject({ ok: true });
  });

  it("sends back a change over the diff budget or outside the finding's area without running tests", async () => {
    const root = repository((top) => {
      fs.writeFileSync(path.join(top, "src/records.js"), "x\ny\nz\n");
      fs.writeFileSync(
        path.join(top, "docs/notes.md"),
        Array.from({ length: 12 }, (_, i) => `n${i}`).join("\n"),
      );
    });
    const run = context(root);
    const calls = await runPlaybookDirectly(
      reviewer,
      [...reviewTools, ...decisionTools, ...scripted({ series: [] })],
      run,
      reviewTask,
    );
    const review = decisionOf(run);
    expect(review.decision).toBe("REQUEST_CHANGES");
    expect(failedChecks(review)).toEqual(["diff-budget", "scope"]);
    expect(review.checks.find((check) => check.name === "scope")?.detail).toMatch(/docs\/notes\.md/);
    expect(calls.some((call) => call.tool === "run_n_times")).toBe(false);
  });

  it("approves only when the test fails on the checkout, passes on the branch, and the suite keeps every case", async () => {
    const run = context(cleanFix());
    const calls = await runPlaybookDirectly(
      reviewer,
      [...reviewTools, ...decisionTools, ...scripted({ series: [{ failed: 1 }, { failed: 0 }] })],
      run,
      reviewTask,
    );
    expect(decisionOf(run).decision).toBe("APPROVE");
    expect(calls.map((call) => call.tool)).toEqual([
      "branch_diff",
      "run_n_times",
      "spin_up",
      "run_n_times",
      "tear_down",
      "run_suite",
      "run_suite",
      "record_review",
    ]);
  });

  it.each([
    {
      name: "a new suite failure",
      script: { series: [{ failed: 1 }, { failed: 0 }], suites: { branch: ["a", "b"], checkout: ["a"] } },
      decision: "REQUEST_CHANGES",
      failed: ["suite"],
      detail: /new failures on qaas\/fix-env-1: b/,
    },
    {
      name: "suite cases gone",
      script: {
        series: [{ failed: 1 }, { failed: 0 }],
        suites: { branch: [], checkout: [], branchTotal: 3 },
      },
      decision: "REQUEST_CHANGES",
      failed: ["suite"],
      detail: /1 case\(s\) the checkout runs no longer run/,
    },
    {
      name: "the test still failing on the branch",
      script: { series: [{ failed: 1 }, { failed: 1 }] },
      decision: "REQUEST_CHANGES",
      failed: ["repro test"],
      detail: /still fails on qaas\/fix-env-1/,
    },
    {
      name: "a test that does not fail on the checkout",
      script: { series: [{ failed: 0 }, { failed: 0 }] },
      decision: "REQUEST_CHANGES",
      failed: ["repro test"],
      detail: /passes on the checkout already/,
    },
    {
      name: "a checkout test broken before its assertion (the target down)",
      script: { series: [{ failed: 1, own_assertion: false, reasons: ["fetch failed"] }] },
      decision: "ESCALATE",
      failed: ["repro test"],
      detail: /did not reach its own assertion on the checkout \(fetch failed\)/,
    },
    {
      name: "a suite that runs no case",
      script: {
        series: [{ failed: 1 }, { failed: 0 }],
        suites: { branch: [], checkout: [], branchTotal: 0, checkoutTotal: 0 },
      },
      decision: "ESCALATE",
      failed: ["suite"],
      detail: /ran no test case/,
    },
  ])("answers $decision for $name", async ({ script, decision, failed, detail }) => {
    const run = context(cleanFix());
    await runPlaybookDirectly(
      reviewer,
      [...reviewTools, ...decisionTools, ...scripted(script)],
      run,
      reviewTask,
    );
    const review = decisionOf(run);
    expect(review.decision).toBe(decision);
    expect(failedChecks(review)).toEqual(failed);
    expect(review.checks.find((check) => check.name === failed[0])?.detail).toMatch(detail);
  });
});

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
