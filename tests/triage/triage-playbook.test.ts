import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LocalTracker } from "../../src/trackers/local-tracker.ts";
import { newHome, startRun, type TriageRun } from "./triage-run.ts";

const open: TriageRun[] = [];
afterEach(() => {
  for (const run of open.splice(0)) run.close();
});
function runIn(home: string, runId: string, system = {}) {
  const run = startRun(home, runId, system);
  open.push(run);
  return run;
}

/** One defect told twice by two agents, three symptoms of one missing unique column, one unrelated, one held. */
function addFindings(run: TriageRun, suffix: string) {
  run.add({
    id: `a1${suffix}`,
    discovered_by: "API",
    defect_class: "validation-missing",
    title: "Avatar upload accepts any file type (user 8f3e2a10-1b2c-4d5e-8f90-123456789abc)",
    location: { kind: "endpoint", value: "POST /users/123/avatar" },
    evidence: [
      {
        kind: "artifact",
        description: "a .exe upload answered 201 at 2026-01-01T10:00:00Z",
        uri: "artifact://r/a.txt",
      },
    ],
  });
  run.add({
    id: `a2${suffix}`,
    discovered_by: "BROWSER",
    defect_class: "validation-missing",
    title: "Avatar upload accepts any file type (user 11111111-2222-3333-4444-555555555555)",
    location: { kind: "endpoint", value: "POST /users/456/avatar/" },
    evidence: [
      {
        kind: "artifact",
        description: "a .exe upload answered 201 at 2026-02-02T11:30:00Z",
        uri: "artifact://r/b.txt",
      },
    ],
    dedupe: { fingerprint: "", discriminator: "form:avatar" },
  });
  run.add({
    id: `c1${suffix}`,
    discovered_by: "DBA",
    domain: "data",
    defect_class: "missing-constraint",
    title: "users.email is not unique in the schema",
    location: { kind: "table", value: "users.email" },
  });
  run.add({
    id: `c2${suffix}`,
    severity: "high",
    title: "Signup answers 500 when the email is already taken",
    location: { kind: "endpoint", value: "POST /signup", related: [{ kind: "table", value: "users.email" }] },
  });
  run.add({
    id: `c3${suffix}`,
    defect_class: "wrong-status",
    title: "Profile update to a taken email answers 200 and keeps both",
    location: {
      kind: "endpoint",
      value: "PUT /users/{id}",
      related: [{ kind: "table", value: "users.email" }],
    },
  });
  run.add({
    id: `u1${suffix}`,
    discovered_by: "AUDITOR",
    domain: "security",
    defect_class: "misconfiguration",
    severity: "low",
    title: "Debug endpoint exposed to anyone",
    location: { kind: "endpoint", value: "GET /debug" },
  });
  run.add({ id: `h1${suffix}`, title: "A hunch without proof", confidence: 0.3 });
}

const filedKeys = (run: TriageRun) => run.ledger("ticket_filed").map((entry) => entry.data.key);

describe("TRIAGE (builtin playbook)", () => {
  it("files one ticket per root cause: duplicates across agents joined, three symptoms of one missing constraint in one ticket, held findings left", async () => {
    const home = newHome();
    const run = runIn(home, "r1");
    addFindings(run, "");
    const { calls } = await run.run();
    expect(calls.some((call) => call.tool === "search_similar" && call.result.ok)).toBe(true);
    const filed = run.ledger("ticket_filed").map((entry) => ({
      key: entry.data.key,
      finding_ids: entry.data.finding_ids,
      severity: entry.data.severity,
    }));
    expect(filed).toEqual([
      { key: "QA-1", finding_ids: ["c2", "c1", "c3"], severity: "high" },
      { key: "QA-2", finding_ids: ["a1", "a2"], severity: "medium" },
      { key: "QA-3", finding_ids: ["u1"], severity: "low" },
    ]);
    const ticket = fs.readFileSync(path.join(home, "tickets", "QA-1.md"), "utf8");
    expect(ticket).toContain("## Symptoms (3, one root cause)");
    for (const title of [
      "Signup answers 500",
      "users.email is not unique",
      "Profile update to a taken email",
    ]) {
      expect(ticket).toContain(title);
    }
    const envelopes = new Map(run.store.readEnvelopes().map((envelope) => [envelope.id, envelope.tracker]));
    expect(envelopes.get("c2")).toMatchObject({ state: "filed", key: "QA-1" });
    expect(envelopes.get("c3")).toMatchObject({ state: "duplicate", key: "QA-1" });
    expect(envelopes.get("h1")?.state).toBe("held");
  });

  it("on a later run comments on a known defect instead of filing it again, and reopens a ticket closed as fixed", async () => {
    const home = newHome();
    const first = runIn(home, "r1");
    addFindings(first, "");
    await first.run();
    const tracker = new LocalTracker(home);
    await tracker.transition("QA-3", "closed", "fixed");

    const second = runIn(home, "r2");
    addFindings(second, "-2");
    await second.run();
    expect(filedKeys(second)).toEqual([]);
    const updates = second.ledger("ticket_updated").map((entry) => [entry.data.key, entry.data.action]);
    expect(updates).toEqual([
      ["QA-1", "comment"],
      ["QA-2", "comment"],
      ["QA-3", "transition"],
    ]);
    expect((await tracker.get("QA-3")).state).toBe("open");
    const markdown = fs.readFileSync(path.join(home, "tickets", "QA-1.md"), "utf8");
    expect(markdown).toMatch(/saw this defect again in run r2 — 2 run\(s\) in all/);
    expect(fs.readFileSync(path.join(home, "tickets", "QA-3.md"), "utf8")).toMatch(
      /closed as fixed but still occurs/,
    );
    expect((await tracker.search({})).length).toBe(3);
  });

  it("matches a remembered defect worded alike under another fingerprint (search_similar), without a new ticket", async () => {
    const home = newHome();
    const first = runIn(home, "r1");
    first.add({
      id: "d1",
      domain: "security",
      defect_class: "misconfiguration",
      title: "Debug endpoint exposed to anyone",
      location: { kind: "endpoint", value: "GET /debug" },
    });
    await first.run();
    const second = runIn(home, "r2");
    second.add({
      id: "d2",
      domain: "security",
      defect_class: "misconfiguration",
      title: "Debug endpoint exposed to anyone",
      location: { kind: "endpoint", value: "GET /debug/" },
      dedupe: { fingerprint: "", discriminator: "header:server" },
    });
    await second.run();
    expect(filedKeys(second)).toEqual([]);
    expect(second.ledger("ticket_updated").map((entry) => entry.data.key)).toEqual(["QA-1"]);
  });

  it("files only what REPRODUCER left fileable once a reproduction is recorded for the run", async () => {
    const run = runIn(newHome(), "r1");
    run.add({
      id: "x",
      title: "Orders list answers 500",
      location: { kind: "endpoint", value: "GET /orders" },
    });
    run.add({
      id: "y",
      title: "Invoices list answers 500",
      location: { kind: "endpoint", value: "GET /invoices" },
    });
    run.add({
      id: "z",
      title: "Carts list answers 500",
      location: { kind: "endpoint", value: "GET /carts" },
    });
    run.add({
      id: "w",
      title: "Passwords are stored in plain text in users.password",
      location: { kind: "table", value: "users.password" },
    });
    run.reproduced("x", true);
    run.reproduced("y", false);
    // No test could replay it (a read of the database), and its evidence stands: it is filed.
    run.reproduced("w", false, { status: "untestable", fileable: true });
    run.reproduced("z", false, { status: "not_reproduced", fileable: false });
    const { logs } = await run.run();
    expect(run.ledger("ticket_filed").map((entry) => entry.data.finding_ids)).toEqual([["w"], ["x"]]);
    expect(logs.join("\n")).toContain("1 reproduced and 1 untestable on their evidence");
  });

  it("stops filing at the run's ticket cap: the denial is ledgered and nothing past the cap reaches the tracker", async () => {
    const home = newHome();
    const run = runIn(home, "r1", { ticket_cap: 1 });
    run.add({
      id: "x",
      severity: "high",
      title: "Orders list answers 500",
      location: { kind: "endpoint", value: "GET /orders" },
    });
    run.add({
      id: "y",
      title: "Invoices list answers 500",
      location: { kind: "endpoint", value: "GET /invoices" },
    });
    const { logs } = await run.run();
    expect(run.ledger("ticket_filed").map((entry) => entry.data.finding_ids)).toEqual([["x"]]);
    expect(run.ledger("tool_denied").map((entry) => [entry.data.tool, entry.data.rule])).toEqual([
      ["create_issue", "ticket-cap"],
    ]);
    expect(logs.some((line) => line.startsWith("ticket cap reached"))).toBe(true);
    expect(await new LocalTracker(home).search({})).toHaveLength(1);
  });
});
