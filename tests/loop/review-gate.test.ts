import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import reviewer from "../../src/agents/playbooks/reviewer.ts";
import { decisionTools } from "../../src/tools/servers/decisions-server.ts";
import { reviewTools } from "../../src/tools/servers/review-server.ts";
import { callTool, runPlaybookDirectly } from "../support/fake-run-context.ts";
import { BRANCH, cleanFix, context, repository, scripted, TEST_PATH } from "./loop-fixtures.ts";

// The builtin REVIEWER decides from tool answers alone: the branch diff as git has it (judged by the
// guardrail rules) and the test and suite runs. Test runs are scripted here; the diff is real.

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
