import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { startRun } from "../../src/run/start-run.ts";
import type { LedgerEntry } from "../../src/store/ledger-kinds.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { freePort } from "../../src/targets/free-port.ts";
import type { FakeModelServer, ScriptedReply } from "../seats/fakes/fake-model-server.ts";
import { startOpenAIFakeServer } from "../seats/fakes/openai-fake-server.ts";
import { REPO_ROOT, tempProject } from "../support/temp-config.ts";

// `qaas run --mode full-loop --target demo`, in process, on a throw-away git copy of the demo app, with
// FIXER on a local fake OpenAI-compatible server that plays a model: it proposes a real patch to one demo
// defect (and updates the app's own test that pinned the defect), and for another defect first tries a
// protected branch and the finding's immutable test, then a patch that breaks one of the app's tests. The
// builtin REVIEWER and VERIFIER judge both by running the tests; the ledger must show every step.

const KEY = "QAAS_FULL_LOOP_TEST_KEY";
// Discovery is held to a few operations so the run takes seconds, not minutes: the loop is under test.
const PROBED = new Set([
  "POST /api/login",
  "GET /api/projects",
  "GET /api/projects/{id}",
  "GET /api/tasks/{id}",
  "GET /api/tasks/{id}/comments",
  "POST /api/tasks/{id}/comments",
  "GET /api/comments/{id}",
]);
const ROSTER = ["MAPPER", "API", "REPRODUCER", "TRIAGE", "FIXER", "REVIEWER", "VERIFIER"];
const GOOD_LOCATION = "GET /api/tasks/{id}/comments";
const BAD_LOCATION = "GET /api/projects/{id}";

let repo: string;
let server: FakeModelServer;

beforeAll(() => {
  process.env[KEY] = "test-key-not-secret";
});
afterAll(() => {
  delete process.env[KEY];
});

/**
 * The demo app in a repository of its own, laid out as in this one (the app in target-app/, its seed
 * passwords in config/targets/, which its tests read): fix branches land there, never in this checkout's.
 */
function demoRepository(): string {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-full-loop-"));
  const root = path.join(top, "target-app");
  fs.cpSync(path.join(REPO_ROOT, "target-app"), root, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|data)$/.test(source),
  });
  fs.mkdirSync(path.join(top, "config/targets"), { recursive: true });
  fs.cpSync(
    path.join(REPO_ROOT, "config/targets/demo.secrets.env"),
    path.join(top, "config/targets/demo.secrets.env"),
  );
  fs.writeFileSync(path.join(top, ".gitignore"), "node_modules\ndata/\n");
  fs.symlinkSync(
    fs.realpathSync(path.join(REPO_ROOT, "node_modules")),
    path.join(top, "node_modules"),
    "dir",
  );
  const git = (...args: string[]) => execFileSync("git", args, { cwd: top, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "demo");
  return root;
}

async function demoProfile(root: string): Promise<Record<string, unknown>> {
  const port = String(await freePort());
  const text = fs.readFileSync(path.join(REPO_ROOT, "config/targets/demo.yaml"), "utf8");
  const profile = parse(text.replaceAll("4010", port)) as {
    environment: Record<string, unknown>;
    api: Record<string, unknown>;
    [key: string]: unknown;
  };
  profile.source = { path: root };
  profile.environment.secrets_file = path.join(REPO_ROOT, "config/targets/demo.secrets.env");
  // The app's suite as this profile runs it: the API file, where both defects are pinned.
  profile.tests = { command: "npx --no-install vitest run tests/api.test.ts", path: "tests" };
  const document = parse(fs.readFileSync(path.join(root, "openapi.yaml"), "utf8")) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const exclude: string[] = [];
  for (const [route, item] of Object.entries(document.paths)) {
    for (const method of Object.keys(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const operation = `${method.toUpperCase()} ${route}`;
      if (!PROBED.has(operation)) exclude.push(operation);
    }
  }
  profile.api.exclude = exclude;
  delete profile.name;
  return profile;
}

function replaceOnce(text: string, before: string, after: string): string {
  expect(text, `the demo still has ${before}`).toContain(before);
  return text.replace(before, after);
}

/** The scripted model: which tool calls it makes depends on the finding and the turn of its conversation. */
function fixerModel(root: string) {
  const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8");
  const comments = read("src/routes/comments.ts");
  const apiTests = read("tests/api.test.ts");
  const projects = read("src/services/projects.ts");
  const fixedComments = replaceOnce(
    comments,
    "if (task.tenant_id !== user.tenantId)",
    "if (!task || task.tenant_id !== user.tenantId)",
  );
  // The app's own test pinned the 500; the fix changes what it must expect.
  const fixedApiTests = replaceOnce(
    apiTests,
    "expect(response.status, id).toBe(500);",
    "expect(response.status, id).toBe(404);",
  );
  const drift = "hours_remaining: formatHours(row.hours_remaining),";
  const breaking1 = replaceOnce(projects, drift, "hours_remaining: row.hours_remaining,");
  const breaking2 = replaceOnce(
    projects,
    drift,
    "hours_remaining: Number(formatHours(row.hours_remaining)),",
  );

  return (body: unknown): ScriptedReply => {
    const messages = (body as { messages: Array<{ role: string; content?: unknown }> }).messages;
    const task = messages
      .filter((message) => message.role === "user")
      .map((message) =>
        typeof message.content === "string" ? message.content : JSON.stringify(message.content),
      )
      .join("\n");
    const step = messages.filter((message) => message.role === "assistant").length;
    const findingId = /^finding_id: (\S+)$/m.exec(task)?.[1];
    const location = /kind: endpoint\s+value: ([^\n]+)/.exec(task)?.[1]?.trim();
    const reopened = /^branch: qaas\/fix-/m.test(task);
    const immutable = /(tests\/qaas\/[\w.-]+\.test\.mjs)/.exec(task)?.[1];
    const branch = `qaas/fix-${findingId}`;
    let plan: ScriptedReply[] = [];
    if (location === GOOD_LOCATION) {
      plan = [
        { tool: "read_file", input: { path: "src/routes/comments.ts" } },
        { tool: "create_branch", input: { branch } },
        { tool: "write_file", input: { branch, path: "src/routes/comments.ts", content: fixedComments } },
        { tool: "write_file", input: { branch, path: "tests/api.test.ts", content: fixedApiTests } },
        { tool: "commit", input: { branch, message: "An unknown task's comments answer 404, not 500" } },
      ];
    } else if (location === BAD_LOCATION && !reopened) {
      plan = [
        { tool: "create_branch", input: { branch: "main" } },
        { tool: "create_branch", input: { branch } },
        { tool: "write_file", input: { branch, path: immutable, content: "// it passes now\n" } },
        { tool: "write_file", input: { branch, path: "src/services/projects.ts", content: breaking1 } },
        { tool: "commit", input: { branch, message: "hours_remaining is a number" } },
      ];
    } else if (location === BAD_LOCATION) {
      plan = [
        { tool: "create_branch", input: { branch } },
        { tool: "write_file", input: { branch, path: "src/services/projects.ts", content: breaking2 } },
        { tool: "commit", input: { branch, message: "hours_remaining is a number, rounded" } },
      ];
    }
    return plan[step] ?? { text: plan.length > 0 ? "The change is committed." : "I cannot fix this one." };
  };
}

describe("the full loop on the demo with a scripted model in FIXER's seat", () => {
  let entries: LedgerEntry[];
  let report: Awaited<ReturnType<typeof startRun>>["report"];
  let statusBefore: string;

  beforeAll(async () => {
    repo = demoRepository();
    server = await startOpenAIFakeServer(fixerModel(repo));
    const project = tempProject();
    project.patchSystem((system) => {
      (system.loop as Record<string, number>).max_round_trips = 1;
    });
    const fixerFile = path.join(project.configDir, "agents/fixer.yaml");
    const fixer = parse(fs.readFileSync(fixerFile, "utf8")) as Record<string, unknown>;
    fixer.seat = {
      backend: "openai-compatible",
      model: "fake-fixer",
      base_url: `${server.url}/v1`,
      is_local: true,
      api_key_env: KEY,
    };
    fs.writeFileSync(fixerFile, stringify(fixer));
    project.addTarget("demo", await demoProfile(repo));
    statusBefore = execFileSync("git", ["status", "--porcelain"], { cwd: repo, encoding: "utf8" });

    const outcome = await startRun({
      home: project.home,
      configDir: project.configDir,
      mode: "full-loop",
      target: "demo",
      agents: ROSTER,
      json: true,
    });
    report = outcome.report;
    entries = RunStore.open(project.home, outcome.runId).readLedger().entries;
    // Keeps the run's folder (ledger, artifacts, suite logs) for a person reading a failure.
    if (process.env.FULL_LOOP_KEEP) {
      fs.cpSync(path.join(project.home, "runs", outcome.runId), process.env.FULL_LOOP_KEEP, {
        recursive: true,
      });
    }
  }, 400_000);

  afterAll(async () => {
    await server?.close();
  });

  const envelopeOf = (location: string) => {
    const emitted = entries.filter((entry) => entry.kind === "ticket_filed");
    const filed = emitted.find((entry) => {
      const ids = (entry.data.finding_ids as string[] | undefined) ?? [String(entry.data.finding_id)];
      return ids.some((id) =>
        entries.some(
          (other) =>
            other.kind === "envelope_emitted" &&
            other.data.envelope_id === id &&
            JSON.stringify(other.data).includes(location),
        ),
      );
    });
    expect(filed, `a ticket for ${location}`).toBeDefined();
    return { ticket: String(filed!.data.key), finding: String(filed!.data.finding_id) };
  };
  const startedFor = (ticket: string) =>
    entries
      .filter(
        (entry) =>
          entry.kind === "agent_started" && (entry.data.input as { ticket?: string }).ticket === ticket,
      )
      .map(
        (entry) => `${entry.data.agent}${(entry.data.input as { branch?: string }).branch ? "@branch" : ""}`,
      );
  const ofTicket = (kind: string, ticket: string) =>
    entries.filter((entry) => entry.kind === kind && entry.data.ticket === ticket);

  it("fixes, reviews and verifies the defect on a qaas/fix-* branch, and the ledger shows each step", () => {
    const { ticket, finding } = envelopeOf(GOOD_LOCATION);
    const branch = `qaas/fix-${finding}`;
    expect(startedFor(ticket)).toEqual(["VERIFIER", "FIXER", "REVIEWER@branch", "VERIFIER@branch"]);
    expect(
      ofTicket("verdict_recorded", ticket).map((entry) => [entry.data.verdict, entry.data.branch]),
    ).toEqual([
      ["NOT_FIXED", "HEAD"],
      ["VERIFIED", branch],
    ]);
    const [review] = ofTicket("review_recorded", ticket);
    expect(review?.data).toMatchObject({ decision: "APPROVE", branch });
    const checks = review!.data.checks as Array<{ name: string; passed: boolean; detail: string }>;
    expect(checks.map((check) => check.name)).toEqual(
      expect.arrayContaining([
        "scope",
        "immutable-test",
        "diff-budget",
        "forbidden-path",
        "repro test",
        "suite",
      ]),
    );
    expect(checks.every((check) => check.passed)).toBe(true);
    // The change is held to the budget and paths of the agent that wrote it, read from the run's config.
    expect(checks.find((check) => check.name === "diff-budget")?.detail).toMatch(/FIXER's policy/);
    expect(checks.find((check) => check.name === "repro test")?.detail).toMatch(
      /fails on the checkout.*passes on/,
    );
    // The fixer's own calls, through the guardrails, in order.
    const fixerCalls = entries
      .filter((entry) => entry.kind === "tool_called" && entry.agent === "FIXER" && entry.data.ok !== false)
      .map((entry) => entry.data.tool);
    expect(fixerCalls).toEqual(
      expect.arrayContaining(["read_file", "create_branch", "write_file", "commit"]),
    );
    expect(report.verdicts).toEqual(expect.arrayContaining([{ ticket, verdict: "VERIFIED", branch }]));

    // The fix is a commit on the branch; main and the checkout's files are as they were.
    const show = (ref: string, file: string) =>
      execFileSync("git", ["show", `${ref}:./${file}`], { cwd: repo, encoding: "utf8" });
    expect(show(branch, "src/routes/comments.ts")).toContain("if (!task || task.tenant_id");
    expect(show("main", "src/routes/comments.ts")).not.toContain("if (!task ||");
    expect(fs.readFileSync(path.join(repo, "src/routes/comments.ts"), "utf8")).not.toContain("if (!task ||");
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: repo, encoding: "utf8" })).toBe(
      statusBefore,
    );
    expect(execFileSync("git", ["branch", "--show-current"], { cwd: repo, encoding: "utf8" }).trim()).toBe(
      "main",
    );
  });

  it("sends a patch that breaks the app's tests back, denies the protected branch and the immutable test, and stops at max_round_trips", () => {
    const { ticket, finding } = envelopeOf(BAD_LOCATION);
    const branch = `qaas/fix-${finding}`;
    expect(startedFor(ticket)).toEqual([
      "VERIFIER",
      "FIXER",
      "REVIEWER@branch",
      "FIXER@branch",
      "REVIEWER@branch",
    ]);
    const reviews = ofTicket("review_recorded", ticket);
    expect(reviews.map((entry) => entry.data.decision)).toEqual(["REQUEST_CHANGES", "REQUEST_CHANGES"]);
    for (const review of reviews) {
      const checks = review.data.checks as Array<{ name: string; passed: boolean; detail: string }>;
      const failed = checks.filter((check) => !check.passed);
      // The defect's own test passes on the branch; what fails is one of the app's tests that used to pass.
      expect(failed.map((check) => check.name)).toEqual(["suite"]);
      expect(failed[0]!.detail).toMatch(/new failures on qaas\/fix-.*DEMO-01/);
      expect(checks.find((check) => check.name === "repro test")?.passed).toBe(true);
    }
    const denials = entries.filter((entry) => entry.kind === "tool_denied" && entry.agent === "FIXER");
    expect(denials.map((entry) => entry.data.rule)).toEqual(["protected-branch", "immutable-test"]);
    expect(ofTicket("verdict_recorded", ticket).map((entry) => entry.data.verdict)).toEqual(["NOT_FIXED"]);
    const escalations = ofTicket("escalation", ticket);
    expect(escalations.map((entry) => entry.data.reason)).toEqual([
      expect.stringMatching(/after 1 round trip\(s\) \(max_round_trips 1\)/),
    ]);
    expect(report.escalations).toEqual(expect.arrayContaining([expect.objectContaining({ ticket })]));
    // Both rounds are commits on the one branch; main never moved.
    const log = execFileSync("git", ["log", "--format=%s", `main..${branch}`], {
      cwd: repo,
      encoding: "utf8",
    });
    expect(log.trim().split("\n")).toEqual([
      "hours_remaining is a number, rounded",
      "hours_remaining is a number",
    ]);
  });

  it("never gave the model's key to the ledger, and the model saw its denials as reasons", () => {
    expect(JSON.stringify(entries)).not.toContain("test-key-not-secret");
    const said = JSON.stringify(server.requests.map((request) => request.body));
    expect(said).toContain("denied by guardrail protected-branch");
    expect(said).toContain("denied by guardrail immutable-test");
  });
});
