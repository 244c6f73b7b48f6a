import { describe, expect, it } from "vitest";
import { classify } from "../../src/agents/playbooks/reproducer.ts";
import { seriesTimeoutMs } from "../../src/tools/servers/test-runner-server.ts";
import { isOwnAssertion } from "../../src/tools/testing/finding-test.ts";
import { parseTap, parseVitestJson, reasonOf } from "../../src/tools/testing/test-results.ts";

const TAP = `TAP version 13
# Subtest: members cannot read another tenant's record
not ok 1 - members cannot read another tenant's record
  ---
  duration_ms: 4.6
  failureType: 'testCodeFailure'
  error: 'expected a denial (got 200)'
  code: 'ERR_ASSERTION'
  ...
# Subtest: health answers
ok 2 - health answers
  ---
  duration_ms: 0.3
  ...
1..2
`;

describe("reading test output", () => {
  it("reads node:test TAP per case, with the failing assertion and its code", () => {
    expect(parseTap(TAP)).toEqual([
      {
        name: "members cannot read another tenant's record",
        passed: false,
        message: "expected a denial (got 200)",
        code: "ERR_ASSERTION",
      },
      { name: "health answers", passed: true },
    ]);
  });

  it("reads a vitest JSON report per assertion, skipping skipped cases", () => {
    const report = JSON.stringify({
      testResults: [
        {
          name: "a.test.ts",
          assertionResults: [
            { fullName: "a works", status: "passed", failureMessages: [] },
            { fullName: "b works", status: "failed", failureMessages: ["AssertionError: nope\n at x"] },
            { fullName: "c later", status: "skipped", failureMessages: [] },
          ],
        },
      ],
    });
    expect(parseVitestJson(report)).toEqual([
      { name: "a works", passed: true },
      { name: "b works", passed: false, message: "AssertionError: nope" },
    ]);
    expect(parseVitestJson("not json")).toBeUndefined();
  });

  it("compares failures by reason, without what varies between runs", () => {
    expect(reasonOf("expected a denial (got 200)")).toBe(reasonOf("expected a denial (got 500)"));
    expect(reasonOf("answered within 500 ms (took 812 ms)")).toBe("answered within # ms");
    // Node prints the values under the message; a fresh token differs on every run, the reason does not.
    const diff = (token: string) =>
      `the answer must not carry the token\n+ actual - expected\n\n+ '${token}'\n- undefined`;
    expect(reasonOf(diff("f3aab9ef"))).toBe(reasonOf(diff("c01dbeef")));
    expect(reasonOf(diff("f3aab9ef"))).toBe("the answer must not carry the token");
  });

  it("tells the test's own assertion from a failure in its set-up", () => {
    const source = 'assert.ok(x, "expected a denial" + " (got " + s + ")");';
    expect(isOwnAssertion("expected a denial (got 200)", source)).toBe(true);
    expect(isOwnAssertion("sign-in as alice failed (401)", source)).toBe(false);
  });
});

describe("REPRODUCER's classification of three runs", () => {
  const series = (overrides: Record<string, unknown>) => ({
    command: "node …",
    recorded_path: "tests/qaas/x.test.mjs",
    test_artifact: "artifact://r/x",
    times: 3,
    failed: 3,
    flake_rate: 0,
    same_reason: true,
    own_assertion: true,
    reasons: ["expected a denial"],
    runs: [{ output_artifact: "artifact://r/o", failure: "expected a denial (got 200)", timed_out: false }],
    ...overrides,
  });

  it("reproduced: every run failed on the same assertion of the test itself", () => {
    expect(classify(series({})).status).toBe("reproduced");
  });
  it("flaky: mixed results, with the rate", () => {
    expect(classify(series({ failed: 2, flake_rate: 0.333 }))).toMatchObject({ status: "flaky" });
  });
  it("not reproduced: passed every run, or failed for different reasons", () => {
    expect(classify(series({ failed: 0 }))).toMatchObject({ status: "not_reproduced" });
    expect(classify(series({ failed: 0 })).notes).toMatch(/passed all 3 runs on a freshly reset target/);
    // A target without a reset command was tested as it was, and the note must not claim otherwise.
    expect(classify(series({ failed: 0 }), undefined, false).notes).toMatch(
      /on the target as it was \(it has no reset\)/,
    );
    expect(classify(series({ same_reason: false, reasons: ["a", "b"] })).status).toBe("not_reproduced");
  });
  it("untestable: the test broke before its own assertion, so it cannot judge the finding", () => {
    expect(classify(series({ own_assertion: false }))).toMatchObject({ status: "untestable" });
    expect(classify(series({ own_assertion: false })).notes).toMatch(/not on its own assertion/);
  });
  it("untestable: a pass after the reset removed the data a load finding was measured on", () => {
    const grown = { reproduction: { steps: [], needs_probe_data: true } };
    expect(classify(series({ failed: 0 }), grown)).toMatchObject({ status: "untestable" });
    expect(classify(series({ failed: 0 }), grown).notes).toMatch(/data its probe created/);
    // A test that still fails on the reset target reproduced, grown data or not.
    expect(classify(series({}), grown).status).toBe("reproduced");
  });
});

describe("the time a series of runs is given", () => {
  const httpTest = 'import assert from "node:assert/strict";\nimport { test } from "node:test";\n';
  const browserTest = `${httpTest}import { chromium } from "playwright-core";\n`;

  it("gives a browser test's runs twice an HTTP test's bound: each launches Chromium first", () => {
    expect(seriesTimeoutMs(httpTest, 15, 3)).toBe(45_000);
    expect(seriesTimeoutMs(browserTest, 15, 3)).toBe(90_000);
  });

  it("adds a wait the test declares once, shared by its runs", () => {
    expect(seriesTimeoutMs(`// qaas-waits-seconds: 70\n${httpTest}`, 15, 3)).toBe(115_000);
  });
});
