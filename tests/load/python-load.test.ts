import { afterAll, beforeAll, describe, expect, it } from "vitest";
import loadPlaybook from "../../src/agents/playbooks/load.ts";
import { loadTools } from "../../src/tools/servers/load-server.ts";
import { callTool, fakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";
import { fixtureMap, fixtureTarget, type RunningApp, startApp } from "./fixtures/fixture-target.ts";
import { artifactFiles, findingKeys, playbookTools } from "./fixtures/playbook-tools.ts";

// LOAD against the Python standard-library fixture (http.server + sqlite3, statements logged through
// sqlite3's trace callback): the same planted defects and look-alikes, in another language and driver.

let app: RunningApp;
beforeAll(async () => {
  app = await startApp("python");
});
afterAll(async () => {
  await app?.stop();
});

describe("LOAD on a Python application", () => {
  it("the playbook emits exactly the planted defects", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const { tools, emitted } = playbookTools();
    await runPlaybookDirectly(loadPlaybook, [...loadTools, ...tools], context);
    expect(findingKeys(emitted)).toEqual([
      "n-plus-one GET /api/posts",
      "slow-endpoint GET /api/reports/summary",
      "unbounded-result GET /api/products",
      "unindexed-query GET /api/posts/search",
    ]);
    expect(artifactFiles(emitted, context.artifactsDir)).toEqual([]);
  }, 40_000);

  it("time_endpoints reports nothing when every endpoint is within a generous budget", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const tool = loadTools.find((candidate) => candidate.name === "time_endpoints")!;
    const result = await callTool(tool, { budget_ms: 2000, samples: 2 }, context);
    expect(result.ok && (result.data as { candidates: unknown[] }).candidates).toEqual([]);
  }, 20_000);

  it("without a statement log, the query-count probes say why instead of guessing", async () => {
    const target = fixtureTarget(app);
    delete target.profile.database!.statement_log;
    const context = fakeRunContext({ target, systemMap: fixtureMap(app) });
    const growth = loadTools.find((candidate) => candidate.name === "measure_query_growth")!;
    const unindexed = loadTools.find((candidate) => candidate.name === "find_unindexed")!;
    for (const tool of [growth, unindexed]) {
      const result = await callTool(tool, {}, context);
      expect(result.ok).toBe(true);
      const data = (result as { data: { candidates: unknown[]; stats: { skipped: string } } }).data;
      expect(data.candidates).toEqual([]);
      expect(data.stats.skipped).toMatch(/no statement log/);
    }
  });
});
