import fs from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { z } from "zod";
import { roleOfTest, roleSessionEnv, userOfTest } from "../../probes/browser/role-session-env.ts";
import { TIMED_MARK, WAITS_MARK } from "../../probes/evidence/failing-test.ts";
import { sharedLimiter } from "../../probes/http/concurrency.ts";
import { quietWindowsOf } from "../../probes/http/quiet-window.ts";
import { probeTargetOf } from "../../probes/http/run-http.ts";
import { webRoles } from "../../probes/pages/web-session.ts";
import type { ToolContext } from "../context.ts";
import { err, ok, type ToolResult } from "../result.ts";
import {
  drivesBrowser,
  findingTestOf,
  isOwnAssertion,
  materialiseTest,
  repeatCommand,
} from "../testing/finding-test.ts";
import { testBrowserEndpoint } from "../testing/test-browser.ts";
import { runTestProcess } from "../testing/test-process.ts";
import { outcomeOf, parseTap, parseVitestJson, reasonOf, type TestOutcome } from "../testing/test-results.ts";
import { defineTool } from "../tool.ts";
import { checkOut, openWorkspace } from "../vcs/worktrees.ts";

// test_runner: runs a finding's generated failing test (once or N times) and the target's own suite, each
// with a timeout, and answers the result per test case. Every output is stored as an artifact, so a
// verdict in the ledger can always be checked against what the test printed.

const Timeout = z.number().int().min(1).max(600).optional();

export interface SingleRun extends TestOutcome {
  /** The first failing case's message, and whether it is one of the test's own assertions. */
  failure?: string;
  reason?: string;
  own_assertion: boolean;
  timed_out: boolean;
  exit_code: number | null;
  duration_ms: number;
  output_artifact: string;
}

/** Runs a finding's stored test `times` times in one process; answers one result per run. */
export async function runFindingTest(
  findingId: string,
  context: ToolContext,
  options: { times: number; timeoutSeconds: number; label: string },
): Promise<{ command: string; recorded_path: string; test_artifact: string; runs: SingleRun[] } | string> {
  const envelope = context.readEnvelopes().find((candidate) => candidate.id === findingId);
  if (!envelope) return `no finding ${findingId} in this run (list_findings shows them)`;
  const test = findingTestOf(envelope, context);
  if (typeof test === "string") return test;
  const file = materialiseTest(test, findingId, context);
  const command = repeatCommand(file, options.times);
  const baseUrl = context.target?.profile.environment.base_url;
  const browserServer = drivesBrowser(test.source) ? await testBrowserEndpoint(context) : undefined;
  const env = {
    ...(baseUrl ? { QAAS_BASE_URL: baseUrl } : {}),
    ...(browserServer ? { QAAS_BROWSER_WS: browserServer } : {}),
    ...(await sessionEnvOf(test.source, context)),
  };
  const runTest = () =>
    runTestProcess(command, {
      cwd: context.target?.root ?? path.dirname(file),
      env,
      timeoutMs: seriesTimeoutMs(test.source, options.timeoutSeconds, options.times),
      signal: context.signal,
    });
  // A test that times the target's answers runs in a measurement window, as timing probes do: another
  // timing test waits its turn and the agents' requests hold back, or a neighbour's load on a
  // single-threaded target would decide the verdict (a slow shorter input hides a ReDoS's growth).
  const result = test.source.includes(`// ${TIMED_MARK}`)
    ? await quietWindowsOf(context).hold({ test: findingId }, runTest)
    : drivesBrowser(test.source)
      ? await inBrowserTurn(context, runTest)
      : await runTest();
  const output_artifact = context.putArtifact(
    `test-runs/${findingId}/${options.label}.tap`,
    `$ ${command}\n${result.stdout}${result.stderr ? `\n--- stderr ---\n${result.stderr}` : ""}`,
  );
  const cases = parseTap(result.stdout);
  // The harness prints each run's cases in order; a run that never printed (a timeout) counts as failed.
  const perRun = Math.max(1, Math.floor(cases.length / options.times));
  const runs: SingleRun[] = [];
  for (let index = 0; index < options.times; index += 1) {
    const own = cases.slice(index * perRun, (index + 1) * perRun);
    const complete = own.length === perRun && cases.length >= options.times;
    const outcome = complete
      ? { passed: own.every((entry) => entry.passed), cases: own, format: "tap" as const }
      : outcomeOf(result.timedOut ? null : result.exitCode, result.timedOut, undefined, "tap");
    const failing = outcome.cases.find((entry) => !entry.passed);
    runs.push({
      ...outcome,
      ...(failing?.message ? { failure: failing.message, reason: reasonOf(failing.message) } : {}),
      own_assertion: failing?.code === "ERR_ASSERTION" && isOwnAssertion(failing.message, test.source),
      timed_out: result.timedOut,
      exit_code: result.exitCode,
      duration_ms: Math.round(result.durationMs / options.times),
      output_artifact,
    });
  }
  return { command, recorded_path: test.recordedPath, test_artifact: test.uri, runs };
}

/**
 * A generated test that needs a session gets it only through its environment, from the run's sign-in
 * layer: a browser test as its role (as the browser that found the defect had it), an HTTP test as the
 * profile user it names.
 */
async function sessionEnvOf(source: string, context: ToolContext): Promise<Record<string, string>> {
  const user = userOfTest(source);
  const role = roleOfTest(source);
  if (user === undefined && (role === undefined || role === "anonymous")) return {};
  const target = probeTargetOf(context);
  if (typeof target === "string") return {};
  if (user !== undefined) {
    const { roles, users } = webRoles(context, target, [user]);
    return roleSessionEnv(
      roles,
      Object.keys(users).find((each) => users[each] === user),
    );
  }
  return roleSessionEnv(webRoles(context, target).roles, role);
}

// Each browser test renders its page in a context of its own (in the run's test browser, or a Chromium it
// launches): several at once on a small machine thrash (five at once took 15-20 s a run on two cores, where
// one alone takes about 3), so they take turns, one per core.
async function inBrowserTurn<T>(context: ToolContext, work: () => Promise<T>): Promise<T> {
  const release = await sharedLimiter(
    context.shared,
    "tests:browser-turns",
    availableParallelism(),
  ).acquire();
  try {
    return await work();
  } finally {
    release();
  }
}

// A browser test's run launches Chromium and loads its page before it asserts anything: on a machine busy
// with the rest of the phase, that alone can take what a whole HTTP test is allowed.
const BROWSER_RUN_FACTOR = 2;

/**
 * How long `times` runs of a test may take in all: the per-run bound (doubled for a browser test), plus the
 * wait a test declares on purpose (a token left to expire), which its runs share.
 */
export function seriesTimeoutMs(source: string, timeoutSeconds: number, times: number): number {
  const perRun = drivesBrowser(source) ? timeoutSeconds * BROWSER_RUN_FACTOR : timeoutSeconds;
  return (perRun * times + declaredWaitSeconds(source)) * 1000;
}

function declaredWaitSeconds(source: string): number {
  const declared = source.match(new RegExp(`^// ${WAITS_MARK} (\\d+)$`, "m"))?.[1];
  return declared ? Math.min(Number(declared), 600) : 0;
}

let runCounter = 0;
function nextLabel(prefix: string): string {
  runCounter += 1;
  return `${prefix}-${Date.now().toString(36)}-${runCounter}`;
}

const runSingle = defineTool({
  name: "run_single",
  server: "test_runner",
  description:
    "Run a finding's generated failing test once against the live target. Answers passed, each test case with its failing assertion, and the output artifact.",
  input: z.strictObject({ finding_id: z.string().min(1), timeout_seconds: Timeout }),
  actions: () => [{ kind: "shell", command: "node --test-reporter=tap qaas-repeat.mjs finding.test.mjs" }],
  async run(input, context) {
    const answer = await runFindingTest(input.finding_id, context, {
      times: 1,
      timeoutSeconds: input.timeout_seconds ?? 15,
      label: nextLabel("single"),
    });
    if (typeof answer === "string") return err(answer);
    const { runs, ...meta } = answer;
    return ok({ ...meta, ...runs[0]! });
  },
});

const runNTimes = defineTool({
  name: "run_n_times",
  server: "test_runner",
  description:
    "Run a finding's generated failing test N times (default 3) in a row. Answers every run, how many failed, the flake rate, and whether every failure was the same assertion of the test itself.",
  input: z.strictObject({
    finding_id: z.string().min(1),
    times: z.number().int().min(1).max(10).optional(),
    timeout_seconds: Timeout,
  }),
  actions: () => [{ kind: "shell", command: "node --test-reporter=tap qaas-repeat.mjs finding.test.mjs" }],
  async run(input, context) {
    const times = input.times ?? 3;
    const answer = await runFindingTest(input.finding_id, context, {
      times,
      timeoutSeconds: input.timeout_seconds ?? 15,
      label: nextLabel("series"),
    });
    if (typeof answer === "string") return err(answer);
    const { runs, ...meta } = answer;
    const failed = runs.filter((run) => !run.passed);
    const reasons = new Set(failed.map((run) => run.reason ?? "(no assertion)"));
    const flakeRate =
      runs.length === 0 ? 0 : Math.min(failed.length, runs.length - failed.length) / runs.length;
    return ok({
      ...meta,
      times: runs.length,
      failed: failed.length,
      passed: runs.length - failed.length,
      // Mixed results are flakiness; all-fail and all-pass are stable either way.
      flake_rate: Math.round(flakeRate * 1000) / 1000,
      same_reason: failed.length > 0 && reasons.size === 1,
      own_assertion: failed.length > 0 && failed.every((run) => run.own_assertion),
      reasons: [...reasons],
      runs: runs.map(({ cases, ...run }) => ({ ...run, cases: cases.length })),
    });
  },
});

/** The target's own test command with a machine-readable reporter when the runner is one we can read. */
function suiteCommand(
  command: string,
  reportFile: string,
): { command: string; format: "tap" | "vitest-json" | undefined } {
  if (/\bvitest\b/.test(command) && !/--reporter/.test(command)) {
    return {
      command: `${command} --reporter=json --outputFile=${JSON.stringify(reportFile)}`,
      format: "vitest-json",
    };
  }
  if (/\bnode\b.*--test\b/.test(command) && !/--test-reporter/.test(command)) {
    return { command: command.replace(/--test\b/, "--test --test-reporter=tap"), format: "tap" };
  }
  return { command, format: undefined };
}

async function runSuite(
  context: ToolContext,
  branch: string | undefined,
  timeoutSeconds: number,
): Promise<ToolResult> {
  const tests = context.target?.profile.tests;
  if (!tests?.command) return err("the target profile names no tests.command, so there is no suite to run");
  let root = context.target?.root;
  if (branch !== undefined) {
    const workspace = openWorkspace(context, branch);
    if (!workspace) return err(`no worktree is open for ${branch} in this run; create_branch opens one`);
    await checkOut(context, workspace);
    root = workspace.root;
  }
  if (root === undefined) return err("this target has no source root to run its suite in");
  const label = nextLabel("suite");
  const reportFile = path.join(context.home, "runs", context.runId, "test-work", `${label}.json`);
  fs.mkdirSync(path.dirname(reportFile), { recursive: true });
  const { command, format } = suiteCommand(tests.command, reportFile);
  const result = await runTestProcess(command, {
    cwd: root,
    timeoutMs: timeoutSeconds * 1000,
    signal: context.signal,
  });
  const report = fs.existsSync(reportFile) ? fs.readFileSync(reportFile, "utf8") : undefined;
  const cases =
    format === "vitest-json" && report !== undefined
      ? parseVitestJson(report)
      : format === "tap"
        ? parseTap(result.stdout)
        : undefined;
  const outcome = outcomeOf(result.exitCode, result.timedOut, cases, format ?? "tap");
  const output_artifact = context.putArtifact(
    `test-runs/suite/${label}.log`,
    `$ ${command}\n(in ${root})\n${result.stdout}\n--- stderr ---\n${result.stderr}${report ? `\n--- report ---\n${report}` : ""}`,
  );
  return ok({
    command: tests.command,
    branch: branch ?? null,
    passed: outcome.passed,
    format: outcome.format,
    total: outcome.cases.length,
    failed: outcome.cases
      .filter((entry) => !entry.passed)
      .map((entry) => ({ name: entry.name, message: entry.message })),
    timed_out: result.timedOut,
    exit_code: result.exitCode,
    duration_ms: result.durationMs,
    output_artifact,
  });
}

const runSuiteTool = defineTool({
  name: "run_suite",
  server: "test_runner",
  description:
    "Run the target's own test command (tests.command of its profile) in the worktree of `branch`, or in the checkout (run once per run and shared: the checkout does not change). Answers passed, the failing cases and the output artifact.",
  input: z.strictObject({ branch: z.string().optional(), timeout_seconds: Timeout }),
  actions: (_input, context) => [{ kind: "shell", command: context.target?.profile.tests?.command ?? "" }],
  async run(input, context) {
    if (input.branch !== undefined) return runSuite(context, input.branch, input.timeout_seconds ?? 180);
    // Nothing in a run writes the checkout, so its suite answers the same every time: the reviewer and the
    // verifier of each ticket compare a branch against it, and one run of it serves them all.
    const key = "test_runner:suite:checkout";
    let pending = context.shared.get(key) as Promise<ToolResult> | undefined;
    if (!pending) {
      pending = runSuite(context, undefined, input.timeout_seconds ?? 180);
      context.shared.set(key, pending);
    }
    const result = await pending;
    return result.ok ? ok({ ...(result.data as object), shared: true }) : result;
  },
});

const affectedTests = defineTool({
  name: "affected_tests",
  server: "test_runner",
  description:
    "List the tests that bear on a finding or on changed files: the finding's own generated test, and the target's test files that mention a changed file's name.",
  input: z.strictObject({ finding_id: z.string().optional(), paths: z.array(z.string()).max(50).optional() }),
  async run(input, context) {
    const affected: Array<{ path: string; why: string }> = [];
    if (input.finding_id) {
      const envelope = context.readEnvelopes().find((candidate) => candidate.id === input.finding_id);
      if (!envelope) return err(`no finding ${input.finding_id} in this run (list_findings shows them)`);
      const recorded = envelope.reproduction.test?.path;
      if (recorded) affected.push({ path: recorded, why: "the finding's generated failing test" });
    }
    const root = context.target?.root;
    const folder = context.target?.profile.tests?.path;
    const names = (input.paths ?? [])
      .map((file) => path.basename(file).replace(/\.[^.]+$/, ""))
      .filter((name) => name.length >= 3);
    if (root && folder && names.length > 0) {
      for (const file of listFiles(path.join(root, folder))) {
        const text = fs.readFileSync(file, "utf8");
        const hit = names.find((name) => text.includes(name));
        if (hit) affected.push({ path: path.relative(root, file), why: `mentions ${hit}` });
      }
    }
    return ok({ tests: affected });
  },
});

function listFiles(folder: string, limit = 500): string[] {
  if (!fs.existsSync(folder)) return [];
  const files: string[] = [];
  for (const entry of fs.readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (files.length >= limit) break;
    if (
      entry.isFile() &&
      /\.(test|spec)\.[cm]?[jt]sx?$/.test(entry.name) &&
      !entry.parentPath.includes("node_modules")
    ) {
      files.push(path.join(entry.parentPath, entry.name));
    }
  }
  return files;
}

export const testRunnerTools = [runSingle, runNTimes, runSuiteTool, affectedTests];
