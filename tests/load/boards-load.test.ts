import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { loadTools } from "../../src/tools/servers/load-server.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import { boardsMap } from "./fixtures/boards-map.ts";
import { fixtureTarget, type RunningApp, startApp } from "./fixtures/fixture-target.ts";

// measure_query_growth on lists under a parent (`GET /api/boards/{id}/cards`): the items it needs are
// created under one parent of the probe's own, so the list it measures is the one that grows.

let app: RunningApp;
beforeAll(async () => {
  app = await startApp("boards");
});
afterAll(async () => {
  await app?.stop();
});

interface Answer {
  candidates: EnvelopeDraft[];
  stats: {
    grown: string[];
    operations: Array<{ operation: string; result?: string; points?: Array<{ items: number }> }>;
  };
}

describe("LOAD on lists under a parent", () => {
  it("grows a nested list under one parent of its own and finds its N+1, not the single-query look-alikes", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: boardsMap(app) });
    const tool = loadTools.find((candidate) => candidate.name === "measure_query_growth")!;
    const result = await callTool(tool, {}, context);
    if (!result.ok) throw new Error(result.error);
    const answer = result.data as Answer;
    expect(answer.candidates.map((draft) => `${draft.defect_class} ${draft.location.value}`)).toEqual([
      "n-plus-one GET /api/boards/{id}/cards",
    ]);
    expect(answer.candidates[0]!.summary).toContain("SELECT COUNT(*) AS n FROM notes WHERE card_id = ?");
    expect(answer.stats.grown).toEqual(
      expect.arrayContaining([
        "/api/boards/{id}/cards +10 under one parent",
        "/api/cards/{id}/checks +10 under one parent",
      ]),
    );
    // The look-alike grew too (one card's checks, ten of them) and stayed at one query.
    const checks = answer.stats.operations.find((entry) => entry.operation === "GET /api/cards/{id}/checks")!;
    expect(checks.points?.map((point) => point.items)).toEqual([0, 10]);
    expect(checks.result).toMatch(/no N\+1/);
    // Everything the probe created is removed again (children first, then their parents).
    const live = new Database(app.dbFile, { readonly: true });
    const counts = live
      .prepare(
        "SELECT (SELECT COUNT(*) FROM boards) AS boards, (SELECT COUNT(*) FROM cards) AS cards, (SELECT COUNT(*) FROM checks) AS checks",
      )
      .get();
    live.close();
    expect(counts).toEqual({ boards: 2, cards: 2, checks: 1 });
  }, 30_000);
});
