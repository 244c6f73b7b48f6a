import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { type DefectEnvelope, ENVELOPE_VERSION } from "../../src/envelope/envelope.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { err, ok, type ToolResult } from "../../src/tools/result.ts";
import { defineTool, type ToolDefinition } from "../../src/tools/tool.ts";
import { fakeRunContext, testAgent } from "../support/fake-run-context.ts";

// What the REVIEWER and VERIFIER tests share: a throw-away repository with a fix branch made by git
// directly (as a person or a shell would), a finding on it, and test runs as scripted tool answers.

export const BRANCH = "qaas/fix-env-1";
export const TEST_PATH = "tests/qaas/records.test.mjs";

export function repository(change: (root: string) => void): string {
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

/** The envelope the loop tests judge; a test overrides what it is about (its evidence, its tracker state). */
export function loopEnvelope(overrides: Partial<DefectEnvelope> = {}): DefectEnvelope {
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
    ...overrides,
  };
}

export function context(root: string, agent = "REVIEWER") {
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
  run.writeEnvelope(loopEnvelope());
  return run;
}

export interface Script {
  /** Failures of the finding's test per run_n_times call, in order: [checkout, branch]. */
  series: Array<{ failed: number; own_assertion?: boolean; reasons?: string[] }>;
  suites?: { branch: Array<string>; checkout: Array<string>; branchTotal?: number; checkoutTotal?: number };
  spinUp?: string;
}

/** Test runs as scripted answers, in the shape the test_runner and env_control tools give them. */
export function scripted(script: Script): ToolDefinition[] {
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
export const cleanFix = () =>
  repository((top) => {
    fs.writeFileSync(path.join(top, "src/records.js"), 'app.get("/records/:id", (r) => denyOthers(r));\n');
  });
