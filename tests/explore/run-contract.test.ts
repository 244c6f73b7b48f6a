import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseBudget, resolveBudget } from "../../src/explore/budget.ts";
import { carriesCredential } from "../../src/explore/credential-text.ts";
import { checkFinding, sortByContract } from "../../src/explore/finding-contract.ts";
import { blockedByCause, rankFindings, renderReport } from "../../src/explore/report.ts";
import {
  type ExploreFinding,
  type ExploreRunFile,
  type ExploreStep,
  newRunFile,
  RunFileWriter,
  readRunFile,
} from "../../src/explore/run-file.ts";
import { countStep } from "../../src/explore/step-codes.ts";
import { shouldStop } from "../../src/explore/stop-rules.ts";
import { exitCodeOf, verdictOf } from "../../src/explore/verdict.ts";

// The exploratory run-file contract, rule by rule: budget parsing and clamping, how each step code counts,
// the stop rules, the finding contract and the credential refusal, the verdict and the report.

const finding = (overrides: Partial<ExploreFinding> = {}): ExploreFinding => ({
  kind: "issue",
  severity: 3,
  title: "Total does not update",
  screen: "/cart",
  expected: "the total changes with the quantity",
  observed: "the total stays 12.00",
  repro: ["open /cart", "set quantity 2"],
  evidence: [{ kind: "screenshot", path: "artifact://run/cart.png" }],
  step: 1,
  ...overrides,
});

function runWith(steps: Array<Partial<ExploreStep>>, findings: ExploreFinding[] = []): ExploreRunFile {
  const run = newRunFile({ goal: "g", persona: "anonymous", ...resolveBudget({}) });
  run.steps = steps.map((step, index) => ({
    index: index + 1,
    title: `step ${index + 1}`,
    status: "passed",
    ...step,
  }));
  run.usage.steps = run.steps.length;
  run.findings = findings;
  return run;
}

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "qaas-explore-"));

describe("budget", () => {
  it("uses the defaults when nothing is asked", () => {
    expect(parseBudget(undefined)).toEqual({
      budget: { steps: 8, minutes: 10, tokens: 150_000 },
      clamped: [],
    });
    expect(parseBudget("")).toEqual(parseBudget(undefined));
  });

  it("reads any subset and keeps in-range values as asked", () => {
    expect(parseBudget("minutes=5")).toEqual({
      budget: { steps: 8, minutes: 5, tokens: 150_000 },
      clamped: [],
    });
    expect(parseBudget("tokens=30000, steps=2").budget).toEqual({ steps: 2, minutes: 10, tokens: 30_000 });
  });

  it("clamps out-of-range values to the nearest bound and names each one", () => {
    const resolved = parseBudget("steps=40,minutes=1,tokens=999999");
    expect(resolved.budget).toEqual({ steps: 12, minutes: 3, tokens: 400_000 });
    expect(resolved.clamped).toEqual([
      { field: "steps", asked: 40, used: 12 },
      { field: "minutes", asked: 1, used: 3 },
      { field: "tokens", asked: 999_999, used: 400_000 },
    ]);
    expect(parseBudget("tokens=100").clamped).toEqual([{ field: "tokens", asked: 100, used: 20_000 }]);
  });

  it("refuses a malformed budget with an error naming the bad key or value", () => {
    expect(() => parseBudget("turns=3")).toThrow(/unknown budget key "turns"/);
    expect(() => parseBudget("steps=many")).toThrow(/steps="many"/);
    expect(() => parseBudget("steps=0")).toThrow(/steps="0"/);
    expect(() => parseBudget("steps=2.5")).toThrow(/steps="2.5"/);
    expect(() => parseBudget("steps")).toThrow(/"steps" is not key=value/);
    expect(() => parseBudget("steps=2,steps=3")).toThrow(/"steps" is given twice/);
  });
});

describe("step codes", () => {
  it.each([
    ["ASSERTION_FAILED", { kind: "product-failure" }],
    ["ASSERTION_INCONCLUSIVE", { kind: "product-failure" }],
    ["CREDENTIAL_MISSING", { kind: "blocked", cause: "credentials" }],
    ["ENVIRONMENT_UNAVAILABLE", { kind: "blocked", cause: "environment" }],
    ["SEED_DATA_MISSING", { kind: "blocked", cause: "seed-data" }],
    ["LOCATOR_NOT_FOUND", { kind: "blocked", cause: "automation" }],
    ["LOCATOR_AMBIGUOUS", { kind: "blocked", cause: "automation" }],
    ["REPLAY_DIVERGED", { kind: "blocked", cause: "automation" }],
    ["BUDGET_EXCEEDED", { kind: "exhausted" }],
  ])("%s counts as %j", (code, expected) => {
    expect(countStep({ status: "failed", code })).toEqual(expected);
  });

  it("a failed step with no code, or an unknown code, is blocked for an unknown cause, never a product failure", () => {
    expect(countStep({ status: "failed" })).toEqual({ kind: "blocked", cause: "unknown" });
    expect(countStep({ status: "failed", code: "SOMETHING_ELSE" })).toEqual({
      kind: "blocked",
      cause: "unknown",
    });
    expect(countStep({ status: "passed" })).toEqual({ kind: "passed" });
  });
});

describe("stop rules", () => {
  it("does not stop a fresh run, nor one whose steps failed on assertions", () => {
    expect(shouldStop(runWith([]), 0)).toEqual({ stop: false });
    const failing = runWith(
      [
        { status: "failed", code: "ASSERTION_FAILED" },
        { status: "failed", code: "ASSERTION_FAILED" },
        { status: "failed", code: "ASSERTION_FAILED" },
      ],
      [finding({ step: 1 })],
    );
    expect(shouldStop(failing, 1)).toEqual({ stop: false });
  });

  it("stops at the step limit", () => {
    const run = runWith([{}, {}]);
    run.budget.steps = 2;
    expect(shouldStop(run, 0)).toMatchObject({ stop: true, reason: "step-limit" });
  });

  it("stops when the minutes are spent", () => {
    expect(shouldStop(runWith([{}]), 10)).toMatchObject({ stop: true, reason: "time" });
    expect(shouldStop(runWith([{}]), 9.9)).toEqual({ stop: false });
  });

  it("stops when the tokens are spent", () => {
    const run = runWith([{}]);
    run.usage.tokens = 150_000;
    expect(shouldStop(run, 0)).toMatchObject({ stop: true, reason: "tokens" });
  });

  it("stops as stuck after three blocked steps with no finding among them", () => {
    const blocked = { status: "blocked" as const, code: "LOCATOR_NOT_FOUND" as const };
    expect(shouldStop(runWith([{}, blocked, blocked, { status: "failed" }]), 0)).toMatchObject({
      stop: true,
      reason: "stuck",
    });
    expect(shouldStop(runWith([blocked, blocked, {}]), 0)).toEqual({ stop: false });
    // One of the three reported a finding: the run learned something, it is not stuck.
    expect(shouldStop(runWith([blocked, blocked, blocked], [finding({ step: 2 })]), 0)).toEqual({
      stop: false,
    });
  });
});

describe("finding contract", () => {
  it("accepts a complete finding", () => {
    expect(checkFinding(finding())).toEqual({ valid: true });
  });

  it("names every field that is missing or invalid", () => {
    const partial = {
      kind: "bug",
      severity: 7,
      title: "x",
      screen: "",
      repro: [],
      evidence: [{ kind: "photo", path: "p" }],
    };
    expect(checkFinding(partial)).toEqual({
      valid: false,
      missing: ["kind", "severity", "screen", "expected", "observed", "repro", "evidence", "step"],
    });
    expect(checkFinding(finding({ severity: 2.5 }))).toEqual({ valid: false, missing: ["severity"] });
  });

  it("keeps a finding that failed the contract apart, and it cannot fail the run", () => {
    const broken = finding({ evidence: [], title: "No evidence" });
    const sorted = sortByContract([broken, finding({ kind: "warning" })]);
    expect(sorted.failedContract).toEqual([{ finding: broken, missing: ["evidence"] }]);
    expect(verdictOf(runWith([{}], [broken]))).toBe("passed");
  });

  it("refuses a literal credential in any finding text, naming the field, and allows secret_ref", () => {
    const writer = new RunFileWriter(tempDir(), runWith([{}]));
    expect(() => writer.addFinding(finding({ observed: "signed in with password: hunter2" }))).toThrow(
      /field observed carries a literal credential/,
    );
    expect(() => writer.addFinding(finding({ repro: ["open /", "login token=abc123def"] }))).toThrow(
      /repro\[1\]/,
    );
    expect(() =>
      writer.addFinding(finding({ expected: "header Authorization: Bearer eyJhbGciOi.x" })),
    ).toThrow(/field expected/);
    expect(readRunFile(writer.file).findings).toEqual([]);
    writer.addFinding(finding({ repro: ["sign in as mia with secret_ref:MIA_PASSWORD"] }));
    expect(readRunFile(writer.file).findings).toHaveLength(1);
  });

  it.each([
    "password=x",
    "password: x",
    "token=abc",
    "access_token: abc",
    "api_key=AKIA123",
    "API-KEY: k",
    "Authorization: Bearer abcdef123",
    "secret=shh",
    'client_secret": "shh',
  ])("recognises %s as a literal credential", (text) => {
    expect(carriesCredential(text)).toBe(true);
  });

  it.each(["secret_ref:MIA_PASSWORD", "password=secret_ref:MIA_PASSWORD", "the password field is empty"])(
    "lets %s through",
    (text) => {
      expect(carriesCredential(text)).toBe(false);
    },
  );
});

describe("verdict", () => {
  it("fails on a valid issue", () => {
    const run = runWith([{ status: "failed", code: "ASSERTION_FAILED" }], [finding()]);
    expect(verdictOf(run)).toBe("failed");
    expect(exitCodeOf("failed")).toBe(1);
  });

  it("is blocked when no step ran or every step was blocked, and there is no issue", () => {
    expect(verdictOf(runWith([]))).toBe("blocked");
    expect(
      verdictOf(runWith([{ status: "blocked", code: "CREDENTIAL_MISSING" }, { status: "failed" }])),
    ).toBe("blocked");
    expect(exitCodeOf("blocked")).toBe(3);
  });

  it("passes when steps ran and only warnings were found", () => {
    const run = runWith(
      [{}, { status: "blocked", code: "LOCATOR_NOT_FOUND" }],
      [finding({ kind: "warning" })],
    );
    expect(verdictOf(run)).toBe("passed");
    expect(exitCodeOf("passed")).toBe(0);
  });
});

describe("report", () => {
  it("orders issues before warnings, most severe first", () => {
    const ranked = rankFindings([
      finding({ kind: "warning", severity: 5, title: "w5" }),
      finding({ severity: 2, title: "i2" }),
      finding({ severity: 4, title: "i4" }),
      finding({ kind: "warning", severity: 1, title: "w1" }),
    ]);
    expect(ranked.map((entry) => entry.title)).toEqual(["i4", "i2", "w5", "w1"]);
  });

  it("groups blocked steps by cause", () => {
    const groups = blockedByCause(
      runWith([
        { status: "blocked", code: "LOCATOR_NOT_FOUND" },
        { status: "blocked", code: "CREDENTIAL_MISSING" },
        { status: "failed", code: "ASSERTION_FAILED" },
        { status: "blocked", code: "LOCATOR_AMBIGUOUS" },
        { status: "failed" },
      ]).steps,
    );
    expect(groups.map((group) => [group.cause, group.steps.map((step) => step.index)])).toEqual([
      ["credentials", [2]],
      ["automation", [1, 4]],
      ["unknown", [5]],
    ]);
  });

  it("prints the verdict, why it ended, budget used, ranked findings, blocked causes and contract failures", () => {
    const run = runWith(
      [{}, { status: "blocked", code: "ENVIRONMENT_UNAVAILABLE", detail: "connection refused" }],
      [
        finding({ kind: "warning", severity: 1, title: "Low contrast" }),
        finding({ severity: 4, title: "Crash" }),
        finding({ title: "Vague", observed: "" }),
      ],
    );
    run.clamped = [{ field: "steps", asked: 40, used: 12 }];
    run.ended = { reason: "stuck", at: new Date(0).toISOString() };
    const text = renderReport(run);
    expect(text).toMatch(/^verdict: failed/);
    expect(text).toContain("ended: stuck");
    expect(text).toContain("steps 2/8");
    expect(text).toContain("steps: asked 40, clamped to 12");
    expect(text.indexOf("Crash")).toBeLessThan(text.indexOf("Low contrast"));
    expect(text).toMatch(/environment:\n {4}2\. step 2 \[ENVIRONMENT_UNAVAILABLE\]: connection refused/);
    expect(text).toMatch(/failed the contract[^\n]*\n {2}Vague: missing or invalid observed/);
  });
});

describe("run file", () => {
  it("is written at creation and rewritten, whole, after every step and every finding", () => {
    const dir = tempDir();
    let clock = 0;
    const writer = new RunFileWriter(
      dir,
      newRunFile({ goal: "reach /settings", persona: "member", ...parseBudget("steps=40") }),
      () => clock,
    );
    const file = path.join(dir, "run.json");
    expect(readRunFile(file)).toMatchObject({
      goal: "reach /settings",
      platform: "web",
      persona: "member",
      budget: { steps: 12 },
      clamped: [{ field: "steps", asked: 40, used: 12 }],
      usage: { steps: 0, minutes: 0, tokens: 0 },
      steps: [],
      findings: [],
    });
    clock = 90_000;
    writer.addStep({ title: "open the entry page", status: "passed" });
    expect(readRunFile(file)).toMatchObject({
      usage: { steps: 1, minutes: 1.5 },
      steps: [{ index: 1, status: "passed" }],
    });
    writer.addStep({
      title: "check the heading",
      status: "failed",
      code: "ASSERTION_FAILED",
      detail: "missing",
    });
    expect(readRunFile(file).steps).toHaveLength(2);
    writer.addFinding(finding({ step: 2 }));
    expect(readRunFile(file).findings).toHaveLength(1);
    writer.addTokens(1200);
    writer.end("plan-complete");
    expect(readRunFile(file)).toMatchObject({ usage: { tokens: 1200 }, ended: { reason: "plan-complete" } });
    // Nothing but the run file is left: the temp files were renamed over it.
    expect(fs.readdirSync(dir)).toEqual(["run.json"]);
  });
});
