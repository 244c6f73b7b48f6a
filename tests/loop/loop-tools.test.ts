import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os, { availableParallelism } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DefectEnvelope } from "../../src/envelope/envelope.ts";
import { renderBrowserTest } from "../../src/probes/browser/browser-test.ts";
import { TIMED_MARK } from "../../src/probes/evidence/failing-test.ts";
import { findChromium } from "../../src/probes/traffic/chromium.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { invokeTool } from "../../src/tools/invoke-tool.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { type FakeRunContext, fakeRunContext, testAgent } from "../support/fake-run-context.ts";
import { loopEnvelope } from "./loop-fixtures.ts";

// The loop's tools on a throw-away repository and a tiny live server: run a stored failing test three
// times, record the reproduction (fileability follows), and change code only on a worktree branch.

let server: http.Server;
let baseUrl = "";
let fixed = false;
/** Requests to /timed in flight at once, and the most there ever were. */
let timedNow = 0;
let timedMost = 0;
/** The same for /browser, which the browser tests' stand-ins ask. */
let browserNow = 0;
let browserMost = 0;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    if (request.url === "/browser") {
      browserNow += 1;
      browserMost = Math.max(browserMost, browserNow);
      return setTimeout(() => {
        browserNow -= 1;
        response.writeHead(200).end("{}");
      }, 800);
    }
    if (request.url === "/console-error") {
      response.writeHead(200, { "content-type": "text/html" });
      return response.end("<!doctype html><title>x</title><script>console.error('boom ' + 42)</script>");
    }
    if (request.url === "/timed") {
      timedNow += 1;
      timedMost = Math.max(timedMost, timedNow);
      return setTimeout(() => {
        timedNow -= 1;
        response.writeHead(200).end("{}");
      }, 150);
    }
    response.writeHead(fixed ? 403 : 200, { "content-type": "application/json" });
    response.end(JSON.stringify({ secret: fixed ? undefined : "x" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const TEST_SOURCE = `import assert from "node:assert/strict";
import { test } from "node:test";
test("others are denied", async () => {
  const response = await fetch(process.env.QAAS_BASE_URL + "/records/1");
  assert.ok([401, 403, 404].includes(response.status), "expected a denial" + " (got " + response.status + ")");
});
`;

function repository(): { root: string; top: string } {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-loop-repo-"));
  const root = path.join(top, "app");
  fs.mkdirSync(path.join(root, "src"), { recursive: true });
  fs.writeFileSync(path.join(root, "src", "records.js"), "export const allowed = () => true;\n");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: top, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start");
  return { root, top };
}

function context(
  agent: Parameters<typeof testAgent>[0],
  root?: string,
  signIn: Record<string, unknown> = {},
): FakeRunContext {
  const profile = TargetProfileSchema.parse({
    name: "fake",
    source: { path: "." },
    environment: { mode: "external", base_url: baseUrl, health_path: "/" },
    ...signIn,
  });
  const run = fakeRunContext({
    agent: testAgent(agent),
    target: { profile, file: "/tmp/fake.yaml", root, goldenLedger: undefined },
  });
  // The store's layout, so artifact URIs resolve: <home>/runs/<run>/artifacts/<name>.
  const artifacts = path.join(run.home, "runs", run.runId, "artifacts");
  run.putArtifact = (name, content) => {
    const file = path.join(artifacts, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    return `artifact://${run.runId}/${name}`;
  };
  return run;
}

function finding(run: FakeRunContext, source = TEST_SOURCE): DefectEnvelope {
  const uri = run.putArtifact("api/x/x.test.mjs", source);
  const envelope = loopEnvelope({
    run_id: run.runId,
    evidence: [
      {
        kind: "failing_test",
        description: "t",
        uri,
        test: { path: "tests/qaas/x.test.mjs", command: "node --test tests/qaas/x.test.mjs" },
      },
    ],
    reproduction: {
      steps: ["GET /records/1"],
      test: { path: "tests/qaas/x.test.mjs", command: "node --test tests/qaas/x.test.mjs" },
    },
    tracker: { state: "unfiled", key: null, url: null },
  });

  run.writeEnvelope(envelope);
  return envelope;
}

describe("test_runner and record_reproduction", () => {
  it("runs the stored test three times in one process and reads each failure", async () => {
    fixed = false;
    const run = context({ tools: ["run_n_times", "record_reproduction"] });
    finding(run);
    const result = await invokeTool("run_n_times", { finding_id: "env-1" }, run, "reproducer-1");
    expect(result).toMatchObject({
      ok: true,
      data: {
        times: 3,
        failed: 3,
        flake_rate: 0,
        same_reason: true,
        own_assertion: true,
        reasons: ["expected a denial"],
      },
    });
  });

  it("a test that passes is not reproduced: the finding is held, with why", async () => {
    fixed = true;
    const run = context({ tools: ["run_n_times", "record_reproduction"] });
    finding(run);
    const series = await invokeTool("run_n_times", { finding_id: "env-1" }, run, "reproducer-1");
    expect(series).toMatchObject({ ok: true, data: { failed: 0 } });
    const recorded = await invokeTool(
      "record_reproduction",
      { finding_id: "env-1", reproduced: false, status: "not_reproduced", flake_rate: 0, notes: "passed" },
      run,
      "reproducer-1",
    );
    expect(recorded).toMatchObject({ ok: true, data: { fileable: false } });
    // The fake store appends; the newest copy is the envelope as it now stands.
    const stored = run.readEnvelopes().at(-1)!;
    expect(stored.reproduction.not_reproducible).toBe(true);
    expect(stored.tracker.state).toBe("held");
    expect(run.entries.map((entry) => entry.kind)).toContain("envelope_held");
  });
});

/** Findings `ids`, each with `source` stored as its generated failing test. */
function storeTests(run: FakeRunContext, ids: string[], source: string, step: string): void {
  for (const id of ids) {
    const uri = run.putArtifact(`tests/${id}/generated.test.mjs`, source);
    const test = { path: `tests/qaas/${id}.test.mjs`, command: `node --test tests/qaas/${id}.test.mjs` };
    run.writeEnvelope(
      loopEnvelope({
        id,
        run_id: run.runId,
        evidence: [{ kind: "failing_test", description: "t", uri, test }],
        reproduction: { steps: [step], test },
      }),
    );
  }
}

/** One run of each finding's test, all asked for at once as REPRODUCER's parallel invocations do. */
function runEachOnceAtOnce(run: FakeRunContext, ids: string[]) {
  return Promise.all(
    ids.map((id) => invokeTool("run_n_times", { finding_id: id, times: 1 }, run, `reproducer-${id}`)),
  );
}

describe("generated tests that time the target", () => {
  // Marked as failing-test.ts marks a test with a duration assertion.
  const TIMED_SOURCE = `// ${TIMED_MARK}
import assert from "node:assert/strict";
import { test } from "node:test";
test("answers quickly", async () => {
  const steps = {};
  for (const name of ["a", "b", "c"]) {
    const started = performance.now();
    await fetch(process.env.QAAS_BASE_URL + "/timed");
    steps[name] = { ms: performance.now() - started };
  }
  assert.ok(steps["c"].ms < 5000, "must answer within 5 s");
});
`;

  it("run one at a time, each with the target to itself", async () => {
    const run = context({ tools: ["run_n_times"] });
    const ids = ["env-1", "env-2"];
    storeTests(run, ids, TIMED_SOURCE, "GET /timed");
    timedMost = 0;
    const results = await runEachOnceAtOnce(run, ids);
    expect(results.map((result) => result.ok && result.data)).toEqual([
      expect.objectContaining({ failed: 0 }),
      expect.objectContaining({ failed: 0 }),
    ]);
    expect(timedMost).toBe(1);
    await closeRunServices(run);
  });
});

describe("generated browser tests", () => {
  // A stand-in: it imports the browser driver as a generated browser test does, and holds the server for a
  // while instead of launching Chromium.
  const BROWSER_SOURCE = `import assert from "node:assert/strict";
import { test } from "node:test";
import { chromium } from "playwright-core";
test("the page works", async () => {
  assert.equal(typeof chromium.launch, "function");
  const response = await fetch(process.env.QAAS_BASE_URL + "/browser");
  assert.equal(response.status, 500, "the page must fail");
});
`;

  it("take turns, as many at once as the machine has cores", async () => {
    const run = context({ tools: ["run_n_times"] });
    const ids = Array.from({ length: availableParallelism() + 1 }, (_, index) => `env-b${index}`);
    storeTests(run, ids, BROWSER_SOURCE, "GET /browser");
    browserMost = 0;
    const results = await runEachOnceAtOnce(run, ids);
    expect(results.map((result) => result.ok && result.data)).toEqual(
      ids.map(() => expect.objectContaining({ failed: 1, own_assertion: true })),
    );
    expect(browserMost).toBeLessThanOrEqual(availableParallelism());
    await closeRunServices(run);
  }, 60_000);

  it("connect to one browser the run keeps for them instead of launching one per run", async () => {
    // Every Chromium started goes through this wrapper, which counts it.
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-chromium-"));
    const launches = path.join(folder, "launches.log");
    const wrapper = path.join(folder, "chromium");
    fs.writeFileSync(wrapper, `#!/bin/sh\necho launch >> "${launches}"\nexec ${findChromium()} "$@"\n`, {
      mode: 0o755,
    });
    const previous = process.env.QAAS_CHROMIUM;
    process.env.QAAS_CHROMIUM = wrapper;
    try {
      const run = context({ tools: ["run_n_times"] });
      const test = renderBrowserTest(
        {
          title: "Console error on /console-error",
          baseUrl,
          role: "anonymous",
          assertion: { kind: "console-error", page: "/console-error", signature: "boom {n}" },
        },
        "console-error",
      );
      storeTests(run, ["env-c1"], test.content, "GET /console-error");
      const result = await invokeTool("run_n_times", { finding_id: "env-c1" }, run, "reproducer-c1");
      expect(result).toMatchObject({ ok: true, data: { times: 3, failed: 3, own_assertion: true } });
      expect(fs.readFileSync(launches, "utf8").trim().split("\n")).toHaveLength(1);
      await closeRunServices(run);
    } finally {
      if (previous === undefined) delete process.env.QAAS_CHROMIUM;
      else process.env.QAAS_CHROMIUM = previous;
    }
  }, 120_000);
});

describe("a generated HTTP test that names the user it sends as", () => {
  // It asserts what the runner gave it, so a run without the user's session fails in its set-up.
  const SOURCE = `import assert from "node:assert/strict";
import { test } from "node:test";
const USER = "bob";
test("sent as bob", () => {
  const headers = JSON.parse(process.env.QAAS_HEADERS || "{}");
  if (!headers.authorization) throw new Error("no session for " + USER);
  assert.equal(headers.authorization, "Bearer none-of-alice", "the session must be alice's (got bob's)");
});
`;

  it("runs with that user's session from the run's sign-in layer, not another user's", async () => {
    process.env.QAAS_TEST_LOOP_ALICE = "token-of-alice";
    process.env.QAAS_TEST_LOOP_BOB = "token-of-bob";
    const run = context({ tools: ["run_n_times"] }, undefined, {
      auth: { login: { kind: "bearer" } },
      users: [
        { name: "alice", role: "member", token: "secret_ref:QAAS_TEST_LOOP_ALICE" },
        { name: "bob", role: "member", token: "secret_ref:QAAS_TEST_LOOP_BOB" },
      ],
    });
    finding(run, SOURCE);
    const result = await invokeTool("run_n_times", { finding_id: "env-1", times: 1 }, run, "reproducer-1");
    // Failing on its own assertion, with bob's token in hand: the runner gave bob's session, not alice's.
    expect(result).toMatchObject({ ok: true, data: { failed: 1, own_assertion: true } });
    const runs = path.join(run.home, "runs", run.runId, "artifacts", "test-runs", "env-1");
    const output = fs
      .readdirSync(runs)
      .map((name) => fs.readFileSync(path.join(runs, name), "utf8"))
      .join("\n");
    expect(output).toContain("token-of-bob");
    await closeRunServices(run);
  });
});

describe("vcs on a worktree", () => {
  const fixer = {
    name: "FIXER",
    phase: "verify" as const,
    layer: "remediate" as const,
    tools: ["create_branch", "write_file", "commit", "push", "open_pull_request"],
    policy: {
      write_paths: ["**"],
      branch_patterns: ["qaas/fix-*"],
      diff_budget: { files: 2, lines: 20 },
      immutable_test: true,
      may_file_tickets: false,
    },
  };

  it("commits on its own branch in a worktree and leaves the checkout as it was", async () => {
    const { root, top } = repository();
    const run = context(fixer, root);
    run.guard.immutableTest = "tests/qaas/x.test.mjs";
    const before = execFileSync("git", ["status", "--porcelain"], { cwd: top, encoding: "utf8" });
    const branch = "qaas/fix-env-1";
    expect(await invokeTool("create_branch", { branch }, run, "fixer-1")).toMatchObject({ ok: true });
    const written = await invokeTool(
      "write_file",
      { branch, path: "src/records.js", content: "export const allowed = () => false;\n" },
      run,
      "fixer-1",
    );
    expect(written).toMatchObject({ ok: true });
    const committed = await invokeTool("commit", { branch, message: "Deny by default" }, run, "fixer-1");
    expect(committed, JSON.stringify(committed)).toMatchObject({
      ok: true,
      data: { files: ["src/records.js"] },
    });
    const show = (ref: string) =>
      execFileSync("git", ["show", `${ref}:app/src/records.js`], { cwd: top, encoding: "utf8" });
    expect(show(branch)).toContain("false");
    expect(show("main")).toContain("true");
    expect(fs.readFileSync(path.join(root, "src", "records.js"), "utf8")).toContain("true");
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: top, encoding: "utf8" })).toBe(before);
    expect(execFileSync("git", ["branch", "--show-current"], { cwd: top, encoding: "utf8" }).trim()).toBe(
      "main",
    );
    await closeRunServices(run);
  });

  it("is refused: main, the immutable test, the diff budget, force, and a push the profile does not allow", async () => {
    const { root } = repository();
    const run = context(fixer, root);
    run.guard.immutableTest = "tests/qaas/x.test.mjs";
    const branch = "qaas/fix-env-1";
    const denied = async (tool: string, input: unknown) => {
      const result = await invokeTool(tool, input, run, "fixer-1");
      expect(result.ok).toBe(false);
      return result.ok ? "" : result.error;
    };
    expect(await denied("create_branch", { branch: "main" })).toMatch(/protected-branch/);
    await invokeTool("create_branch", { branch }, run, "fixer-1");
    expect(
      await denied("write_file", { branch, path: "tests/qaas/x.test.mjs", content: "// gutted\n" }),
    ).toMatch(/immutable-test/);
    const big = Array.from({ length: 30 }, (_, index) => `line ${index}`).join("\n");
    expect(await denied("write_file", { branch, path: "src/records.js", content: big })).toMatch(
      /diff-budget/,
    );
    expect(await denied("push", { branch, force: true })).toMatch(/force-push/);
    expect(await denied("push", { branch })).toMatch(/does not allow pushing/);
    expect(await denied("open_pull_request", { branch, title: "t", body: "b" })).toMatch(/not available/);
    expect(
      run.entries.filter((entry) => entry.kind === "tool_denied").map((entry) => entry.data.rule),
    ).toEqual(["protected-branch", "immutable-test", "diff-budget", "force-push"]);
    await closeRunServices(run);
  });
});
