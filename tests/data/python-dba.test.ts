import { afterAll, beforeAll, describe, expect, it } from "vitest";
import dbaPlaybook from "../../src/agents/playbooks/dba.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { dbTools } from "../../src/tools/servers/db-server.ts";
import { fixtureMap, fixtureTarget, type RunningApp, startApp } from "../load/fixtures/fixture-target.ts";
import { artifactFiles, findingKeys, playbookTools } from "../load/fixtures/playbook-tools.ts";
import { callTool, fakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";

// DBA against the Python standard-library fixture: assumptions read from sqlite3 calls (`cur.execute(…)`
// then `cur.fetchone()`, `conn.execute(…).fetchone()`), confirmed through the API and on a scratch copy.

let app: RunningApp;
beforeAll(async () => {
  app = await startApp("python");
});
afterAll(async () => {
  await app?.stop();
});

describe("DBA on a Python application", () => {
  it("the playbook emits exactly the planted missing constraints", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const { tools, emitted } = playbookTools();
    await runPlaybookDirectly(dbaPlaybook, [...dbTools, ...tools], context);
    // Not reported: the unique username, the CHECKed wallet balance, lookups by primary key.
    expect(findingKeys(emitted)).toEqual([
      "missing-constraint products.stock",
      "missing-constraint users.email",
    ]);
    expect(artifactFiles(emitted, context.artifactsDir)).toEqual([]);
    const email = emitted.find((draft) => draft.location.value === "users.email") as EnvelopeDraft;
    expect(email.confidence).toBeGreaterThanOrEqual(0.9);
    expect(email.location.source).toEqual({ file: "src/app.py", line: expect.any(Number) });
    expect(email.reproduction.curl).toContain("/api/users");
  }, 30_000);

  it("confirm_constraint with via=scratch confirms on the copy without a single request", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const tool = dbTools.find((candidate) => candidate.name === "confirm_constraint")!;
    const result = await callTool(tool, { via: "scratch" }, context);
    expect(result.ok).toBe(true);
    const data = (result as { data: { candidates: EnvelopeDraft[]; stats: Record<string, unknown> } }).data;
    expect(data.stats.requests).toBeUndefined();
    expect(data.candidates.map((draft) => `${draft.location.value} ${draft.confidence}`)).toEqual([
      "products.stock 0.8",
      "users.email 0.75",
    ]);
  });

  it("a weak assumption is only tried when asked for, and then comes out held", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const tool = dbTools.find((candidate) => candidate.name === "confirm_constraint")!;
    const result = await callTool(tool, { assumptions: ["not-null:users.name"] }, context);
    const drafts = (result as { data: { candidates: EnvelopeDraft[] } }).data.candidates;
    expect(drafts.map((draft) => [draft.location.value, draft.confidence < 0.5])).toEqual([
      ["users.name", true],
    ]);
  });
});
