import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import loadPlaybook from "../../src/agents/playbooks/load.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { loadTools } from "../../src/tools/servers/load-server.ts";
import { isOwnAssertion } from "../../src/tools/testing/finding-test.ts";
import { parseTap } from "../../src/tools/testing/test-results.ts";
import { callTool, fakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";
import { fixtureMap, fixtureTarget, type RunningApp, startApp } from "./fixtures/fixture-target.ts";
import { artifactFiles, findingKeys, playbookTools } from "./fixtures/playbook-tools.ts";

// LOAD against the TypeScript (node:http + better-sqlite3) fixture: every planted performance defect is
// found, and none of the correct look-alikes next to them is.

let app: RunningApp;
beforeAll(async () => {
  app = await startApp("typescript");
});
afterAll(async () => {
  await app?.stop();
});

const PLANTED = [
  "n-plus-one GET /api/posts",
  "n-plus-one GET /api/reports/authors",
  "slow-endpoint GET /api/reports/summary",
  "unbounded-result GET /api/products",
  "unindexed-query GET /api/posts/search",
];

describe("LOAD on a TypeScript application", () => {
  it("the playbook emits exactly the planted defects, each with evidence on disk", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const { tools, emitted } = playbookTools();
    const calls = await runPlaybookDirectly(loadPlaybook, [...loadTools, ...tools], context);
    expect(calls.map((call) => call.tool).filter((tool) => tool !== "emit_envelope")).toEqual([
      "get_system_map",
      "time_endpoints",
      "probe_redos",
      "measure_query_growth",
      "probe_unbounded",
      "find_unindexed",
      "time_endpoints",
    ]);
    // Look-alikes that must not appear: the batched feed, the grouped report, the honoured limits, the
    // indexed lookups, the fast count.
    expect(findingKeys(emitted)).toEqual(PLANTED);
    expect(artifactFiles(emitted, context.artifactsDir)).toEqual([]);
    for (const draft of emitted) {
      expect(draft.domain).toBe("performance");
      expect(draft.confidence).toBeGreaterThanOrEqual(0.8);
      expect(draft.evidence.some((item) => item.kind === "artifact")).toBe(true);
      expect(draft.reproduction.curl).toMatch(/^curl /);
    }
    const byClass = (name: string) => emitted.find((draft) => draft.defect_class === name) as EnvelopeDraft;
    expect(byClass("n-plus-one").dedupe?.discriminator).toBe("comments");
    expect(byClass("n-plus-one").summary).toContain("SELECT id, body FROM comments WHERE post_id = ?");
    expect(byClass("n-plus-one").evidence.some((item) => item.kind === "failing_test")).toBe(true);
    // Measured on the data the probe grew: a reproduction after a reset cannot judge it by a pass.
    expect(byClass("n-plus-one").reproduction.needs_probe_data).toBe(true);
    // A report with no page of its own grows with the users the probe created (and removed nothing else).
    const report = emitted.find(
      (draft) => draft.location.value === "GET /api/reports/authors",
    ) as EnvelopeDraft;
    expect(report.summary).toContain("SELECT COUNT(*) AS n FROM posts WHERE author_id = ?");
    expect(byClass("unindexed-query").dedupe?.discriminator).toBe("posts.category");
    expect(byClass("unindexed-query").location.related).toContainEqual({
      kind: "table",
      value: "posts.category",
    });
    expect(byClass("unbounded-result").reproduction.test?.command).toMatch(/^node --test /);
    expect(byClass("slow-endpoint").reproduction.test).toBeDefined();
    // The generated tests fail against the application while the defects are there.
    const reasons: Array<[EnvelopeDraft, RegExp]> = [
      [byClass("n-plus-one"), /must not run more statements than expected \(got \d+, at most \d+/],
      [byClass("unbounded-result"), /must return at most one item/],
      [byClass("slow-endpoint"), /must answer within 200 ms/],
    ];
    for (const [draft, reason] of reasons) {
      const test = draft.evidence.find((item) => item.kind === "failing_test")!;
      const file = path.join(context.artifactsDir, test.uri!.replace(/^artifact:\/\/[^/]+\//, ""));
      const run = spawnSync(process.execPath, ["--test", file], {
        encoding: "utf8",
        env: { ...process.env, QAAS_BASE_URL: app.baseUrl, QAAS_STATEMENT_LOG: app.logFile },
        timeout: 15_000,
      });
      expect(run.status, `${draft.defect_class}: ${run.stdout}`).not.toBe(0);
      expect(run.stdout).toMatch(/fail 1/);
      expect(run.stdout).toMatch(reason);
      // On the test's own assertion, or REPRODUCER would call the finding untestable.
      const failure = parseTap(run.stdout).find((entry) => !entry.passed);
      expect(isOwnAssertion(failure?.message, fs.readFileSync(file, "utf8"))).toBe(true);
    }
  }, 40_000);

  it("records the counts behind the N+1: queries grow with items on the list, not on the batched feed", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const tool = loadTools.find((candidate) => candidate.name === "measure_query_growth")!;
    const result = await callTool(tool, { samples: 2 }, context);
    expect(result.ok).toBe(true);
    const operations = (
      result as {
        data: {
          stats: {
            operations: Array<{
              operation: string;
              points?: Array<{ items: number; queries: number }>;
              result?: string;
            }>;
          };
        };
      }
    ).data.stats.operations;
    const posts = operations.find((entry) => entry.operation === "GET /api/posts")!;
    const feed = operations.find((entry) => entry.operation === "GET /api/feed")!;
    expect(posts.points).toEqual(
      [
        { label: "before", items: 2, queries: 3 },
        { label: "large", items: 20, queries: 21 },
      ].map(({ items, queries }) => expect.objectContaining({ items, queries })),
    );
    expect(feed.points?.map((point) => point.queries)).toEqual([2, 2]);
    const measurement = fs.readdirSync(path.join(context.artifactsDir, "measure_query_growth"));
    expect(measurement.some((name) => name.startsWith("n-plus-one-get-api-posts"))).toBe(true);
  }, 20_000);

  it("on an external target without writes, it measures read-only and creates nothing", async () => {
    const context = fakeRunContext({
      target: fixtureTarget(app, { mode: "external", allow_writes: false }),
      systemMap: fixtureMap(app),
    });
    const before = fs.statSync(app.dbFile).mtimeMs;
    const growth = loadTools.find((candidate) => candidate.name === "measure_query_growth")!;
    const unbounded = loadTools.find((candidate) => candidate.name === "probe_unbounded")!;
    const results = [await callTool(growth, { samples: 1 }, context), await callTool(unbounded, {}, context)];
    const drafts = results.flatMap((result) =>
      result.ok ? (result.data as { candidates: EnvelopeDraft[] }).candidates : [],
    );
    // 25 seeded posts are enough to see the N+1 at limit=2 vs limit=20; the ignored limit shows on 6 products;
    // the authors report, with no user to add, already counts posts once for each seeded author.
    expect(findingKeys(drafts)).toEqual([
      "n-plus-one GET /api/posts",
      "n-plus-one GET /api/reports/authors",
      "unbounded-result GET /api/products",
    ]);
    for (const result of results) {
      const stats = (
        result as { data: { stats: { by_status: Record<string, number>; writes_allowed: boolean } } }
      ).data.stats;
      expect(stats.writes_allowed).toBe(false);
      expect(Object.keys(stats.by_status).filter((status) => status !== "200")).toEqual([]);
    }
    expect(fs.statSync(app.dbFile).mtimeMs).toBe(before);
  }, 20_000);
});
