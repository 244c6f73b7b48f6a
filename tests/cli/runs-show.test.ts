import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { summarizeEntry } from "../../src/cli/entry-summary.ts";
import { buildShowView } from "../../src/cli/show-view.ts";
import { RunStore } from "../../src/store/run-store.ts";
import { sampleEnvelope } from "../store/sample-envelope.ts";

// Black-box: a run written into a temp home with the real store, then the real binary reads it back.

const execute = promisify(execFile);
const repository = path.resolve(import.meta.dirname, "../..");
let home = "";
let runId = "";

async function qaas(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const environment = { ...process.env };
  delete environment.QAAS_HOME;
  try {
    const { stdout, stderr } = await execute(process.execPath, ["bin/qaas.js", "--home", home, ...args], {
      cwd: repository,
      env: environment,
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-cli-"));
  const older = RunStore.create(home, { runId: "20261128-100000-aaaa", mode: "pr-check", target: "blog" });
  older.append("run_started", { mode: "pr-check", target: "blog" });
  older.append("run_finished", { status: "completed", findings: 0, cost_usd: 0, tokens: 0 });
  // Back-date the older run so the order does not depend on timing.
  const lines = fs
    .readFileSync(older.ledgerPath, "utf8")
    .replaceAll(/"at":"[^"]+"/g, '"at":"2026-11-28T10:00:00.000Z"');
  fs.writeFileSync(older.ledgerPath, lines);

  const store = RunStore.create(home, { mode: "nightly", target: "shop" });
  runId = store.runId;
  store.append("run_started", {
    run_id: runId,
    mode: "nightly",
    target: "shop",
    target_commit: "0123456789abcdef",
    target_branch: "main",
    target_dirty: true,
    roster: ["API", "BROWSER"],
    seat: "builtin",
    budget: { usd: 5 },
  });
  store.append("agent_started", { agent: "API", invocation: 1 }, "API");
  store.append("tool_called", { tool: "http_request", ok: true }, "API");
  store.append("envelope_emitted", { envelope_id: "env-1", severity: "medium", title: "x" }, "API");
  store.append(
    "envelope_emitted",
    {
      envelope_id: "env-2",
      severity: "low",
      defect_class: "console-error",
      title: "Console error on the home page",
      fileable: false,
    },
    "BROWSER",
  );
  store.append("envelope_held", { envelope_id: "env-2", reason: "confidence below threshold" }, "BROWSER");
  store.append(
    "agent_finished",
    { agent: "API", invocation: 1, outcome: "completed", turns: 7, cost_usd: 0.125, tokens: 4000 },
    "API",
  );
  store.append("agent_failed", { agent: "BROWSER", invocation: 1, error: "chromium missing" }, "BROWSER");
  store.append("ticket_filed", { envelope_id: "env-1", key: "QA-7" }, "TRIAGE");
  store.append("run_finished", { status: "completed", findings: 2, cost_usd: 0.125, tokens: 4000 });
  store.writeEnvelope(
    sampleEnvelope({ id: "env-1", run_id: runId, tracker: { state: "filed", key: "QA-7", url: null } }),
  );
});

describe("qaas runs / show / trace", () => {
  it("runs --json lists runs newest first", async () => {
    const result = await qaas("runs", "--json");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([
      {
        id: runId,
        mode: "nightly",
        target: "shop",
        started: expect.any(String),
        status: "completed",
        findings: 2,
        cost_usd: 0.125,
        tokens: 4000,
      },
      expect.objectContaining({ id: "20261128-100000-aaaa", mode: "pr-check", status: "completed" }),
    ]);
  });

  it("runs prints a table with the documented columns", async () => {
    const result = await qaas("runs");
    expect(result.code).toBe(0);
    const [headerLine, firstRow] = result.stdout.split("\n");
    expect(headerLine?.split(/\s{2,}/)).toEqual([
      "id",
      "mode",
      "target",
      "started (UTC)",
      "status",
      "findings",
      "cost",
    ]);
    expect(firstRow).toMatch(new RegExp(`^${runId}\\s+nightly\\s+shop\\s+.*completed\\s+2\\s+\\$0\\.1250$`));
  });

  it("show --json prints one object with header, timeline, agents and findings", async () => {
    const result = await qaas("show", runId, "--json");
    expect(result.code).toBe(0);
    const view = JSON.parse(result.stdout);
    expect(view).toMatchObject({
      id: runId,
      mode: "nightly",
      target: "shop",
      status: "completed",
      commit: "0123456789abcdef",
      branch: "main",
      dirty: true,
      seat: "builtin",
      budget: { usd: 5, tokens: null, spent_usd: 0.125, spent_tokens: 4000, exceeded: false },
    });
    expect(view.timeline).toHaveLength(10);
    expect(view.timeline[7]).toEqual({
      seq: 8,
      at: expect.any(String),
      kind: "agent_failed",
      agent: "BROWSER",
      summary: "failed chromium missing",
    });
    expect(view.agents).toEqual([
      { agent: "API", invocations: 1, cost_usd: 0.125, tokens: 4000, turns: 7, outcome: "completed" },
      { agent: "BROWSER", invocations: 1, cost_usd: 0, tokens: 0, turns: 0, outcome: "failed" },
    ]);
    expect(view.findings).toEqual([
      {
        id: "env-1",
        severity: "medium",
        defect_class: "unhandled-error",
        title: sampleEnvelope().title,
        state: "filed",
        ticket: "QA-7",
      },
      {
        id: "env-2",
        severity: "low",
        defect_class: "console-error",
        title: "Console error on the home page",
        state: "held",
        ticket: null,
      },
    ]);
  });

  it("show leads with findings by severity, agents and spend; the timeline only with --timeline", async () => {
    const result = await qaas("show", "latest");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Run ${runId}`);
    expect(result.stdout).toMatch(/target\s+shop @ 0123456789ab on main \(dirty\)/);
    expect(result.stdout).toMatch(/budget\s+\$0\.1250 of \$5\.00/);
    expect(result.stdout).toContain("Findings (2: 1 medium, 1 low)");
    expect(result.stdout).toMatch(/medium\s+unhandled-error\s+filed QA-7\s+env-1\s+Creating an item/);
    expect(result.stdout).toMatch(/low\s+console-error\s+held\s+env-2\s+Console error on the home page/);
    expect(result.stdout).toMatch(/API\s+completed\s+1\s+\$0\.1250\s+4000\s+7/);
    expect(result.stdout).toMatch(/BROWSER\s+failed\s+1/);
    // Findings come before agents, and the raw ledger stays out unless asked for.
    expect(result.stdout.indexOf("Findings (")).toBeLessThan(result.stdout.indexOf("Agents"));
    expect(result.stdout).not.toContain("Timeline (UTC)");
    expect(result.stdout).not.toMatch(/envelope_emitted/);

    const withTimeline = await qaas("show", "latest", "--timeline");
    expect(withTimeline.code).toBe(0);
    expect(withTimeline.stdout).toContain("Timeline (UTC)");
    expect(withTimeline.stdout).toMatch(
      /envelope_emitted\s+BROWSER\s+env-2 low console-error — Console error/,
    );
  });

  it("show of a missing run is one line on stderr and exit code 1", async () => {
    const result = await qaas("show", "20990101-000000-dead");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^qaas: no run "20990101-000000-dead" in .*qaas runs.*\[RUN_NOT_FOUND\]$/),
    ]);
  });

  it("trace filters raw entries by kind and agent", async () => {
    const byKind = await qaas("trace", runId, "--kind", "envelope_emitted,envelope_held", "--json");
    expect(byKind.code).toBe(0);
    const parsed = JSON.parse(byKind.stdout);
    expect(parsed).toMatchObject({ run: runId, count: 3, warnings: [] });
    expect(parsed.entries.map((entry: { seq: number }) => entry.seq)).toEqual([4, 5, 6]);

    const byAgent = await qaas("trace", runId, "--agent", "browser");
    expect(byAgent.code).toBe(0);
    expect(
      byAgent.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(" ")[0]),
    ).toEqual(["#5", "#6", "#8"]);

    const unknown = await qaas("trace", runId, "--kind", "invented");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('--kind "invented" is not a ledger kind');
  });
});

describe("show view (in process)", () => {
  it("takes the budget from the router's plan and counts only a run-level stop as exceeded", () => {
    const store = RunStore.create(fs.mkdtempSync(path.join(os.tmpdir(), "qaas-view-")), {
      mode: "m",
      target: "t",
    });
    store.append("run_started", { mode: "m", target: "t" });
    store.append("router_event", {
      event: { type: "run.start", plan: { budget: { usd: 3, tokens: 1000 } } },
    });
    store.append("budget_exceeded", { scope: "agent", agent: "API" });
    expect(buildShowView(store).budget).toEqual({
      usd: 3,
      tokens: 1000,
      spent_usd: 0,
      spent_tokens: 0,
      exceeded: false,
    });
    store.append("budget_exceeded", { scope: "run" });
    expect(buildShowView(store).budget.exceeded).toBe(true);
  });

  it("summarises an entry of unexpected shape as its data instead of failing", () => {
    const entry = { seq: 1, at: "2026-11-29T00:00:00Z", kind: "warning" as const, data: { text: ["odd"] } };
    expect(summarizeEntry(entry)).toBe('{"text":["odd"]}');
    expect(summarizeEntry({ ...entry, data: { message: "disk\nfull" } })).toBe("disk full");
  });
});
