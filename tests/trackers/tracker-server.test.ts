import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.ts";
import { invokeTool } from "../../src/tools/invoke-tool.ts";
import { TRACKER_SHARED_KEY } from "../../src/tools/servers/tracker-server.ts";
import { GithubTracker } from "../../src/trackers/github-tracker.ts";
import { newHome, startRun, type TriageRun } from "../triage/triage-run.ts";
import { GITHUB_TOKEN, startFakeGithub } from "./fake-github.ts";
import type { FakeServer } from "./fake-server.ts";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function withGithub(run: TriageRun) {
  const github = await startFakeGithub();
  cleanups.push(() => github.close());
  run.context.shared.set(
    TRACKER_SHARED_KEY,
    new GithubTracker({ owner: "acme", repo: "shop", token: GITHUB_TOKEN, baseUrl: github.url }),
  );
  return github;
}

function triageRun(system = {}): TriageRun {
  const run = startRun(newHome(), "r1", system);
  cleanups.push(() => run.close());
  run.add({
    id: "x",
    title: "Orders list answers 500",
    location: { kind: "endpoint", value: "GET /orders" },
  });
  return run;
}

const issuesOf = (github: FakeServer & { issues: Map<number, unknown> }) => github.issues.size;

describe("tracker tool server under check()", () => {
  it("files through the configured adapter and ledgers the filing; the same defect is refused a second ticket", async () => {
    const run = triageRun();
    const github = await withGithub(run);
    const filed = await invokeTool("create_issue", { finding_ids: ["x"] }, run.context, "i1");
    expect(filed).toEqual({
      ok: true,
      data: {
        key: "1",
        url: "https://github.example/acme/shop/issues/1",
        fingerprints: [expect.stringMatching(/^fp_/)],
      },
    });
    expect(run.ledger("ticket_filed")).toEqual([
      expect.objectContaining({
        agent: "TRIAGE",
        data: expect.objectContaining({ key: "1", tracker: "github", finding_id: "x" }),
      }),
    ]);
    expect(run.context.guard.ticketsFiled).toBe(1);
    const again = await invokeTool("create_issue", { finding_ids: ["x"] }, run.context, "i1");
    expect(again.ok).toBe(false);
    expect(!again.ok && again.error).toMatch(/already has ticket 1 \(open\); comment on it/);
    expect(run.context.guard.ticketsFiled).toBe(1);
    expect(issuesOf(github)).toBe(1);
    const found = await invokeTool("search_issues", { finding_id: "x" }, run.context, "i1");
    expect(
      found.ok && (found.data as { tickets: Array<{ key: string }> }).tickets.map((ticket) => ticket.key),
    ).toEqual(["1"]);
  });

  it("denies filing over the run's ticket cap: recorded as a ticket-cap denial, the tracker never reached", async () => {
    const run = triageRun({ ticket_cap: 2 });
    const github = await withGithub(run);
    run.context.guard.ticketsFiled = 2;
    const denied = await invokeTool("create_issue", { finding_ids: ["x"] }, run.context, "i1");
    expect(denied).toMatchObject({ ok: false, details: { rule: "ticket-cap" } });
    expect(run.ledger("tool_denied").map((entry) => [entry.data.tool, entry.data.rule])).toEqual([
      ["create_issue", "ticket-cap"],
    ]);
    expect(run.ledger("ticket_filed")).toEqual([]);
    expect(github.requests).toEqual([]);
  });

  it("denies an agent whose policy does not file tickets", async () => {
    const run = triageRun();
    const github = await withGithub(run);
    const api = {
      ...run.context,
      agent: { ...loadConfig().agents.get("API")!.config, tools: ["create_issue"] },
    };
    const denied = await invokeTool("create_issue", { finding_ids: ["x"] }, api, "i1");
    expect(denied).toMatchObject({ ok: false, details: { rule: "ticket-cap" } });
    expect(!denied.ok && denied.error).toMatch(/API may not file a ticket: its policy does not allow/);
    expect(github.requests).toEqual([]);
  });

  it("comments, moves and links through the adapter, each change ledgered; a tracker refusal is a reason, not a crash", async () => {
    const run = triageRun();
    const github = await withGithub(run);
    await invokeTool("create_issue", { finding_ids: ["x"] }, run.context, "i1");
    run.add({
      id: "y",
      title: "Invoices list answers 500",
      location: { kind: "endpoint", value: "GET /invoices" },
    });
    await invokeTool("create_issue", { finding_ids: ["y"] }, run.context, "i1");
    expect((await invokeTool("comment_issue", { key: "1", text: "seen again" }, run.context, "i1")).ok).toBe(
      true,
    );
    const closed = await invokeTool(
      "transition_issue",
      { key: "1", to: "closed", resolution: "fixed" },
      run.context,
      "i1",
    );
    expect(closed).toMatchObject({ ok: true, data: { state: "closed", resolution: "fixed" } });
    expect((await invokeTool("link_issues", { from: "2", to: "1" }, run.context, "i1")).ok).toBe(true);
    expect(run.ledger("ticket_updated").map((entry) => entry.data.action)).toEqual([
      "comment",
      "transition",
      "link",
    ]);
    const refused = await invokeTool("transition_issue", { key: "1", to: "In Review" }, run.context, "i1");
    expect(!refused.ok && refused.error).toMatch(/an issue is only open or closed/);
    const missing = await invokeTool("comment_issue", { key: "99", text: "x" }, run.context, "i1");
    expect(!missing.ok && missing.error).toMatch(/could not comment on issue #99: 404/);
    expect(github.issues.size).toBe(2);
  });
});
