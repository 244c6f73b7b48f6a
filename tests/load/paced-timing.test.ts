import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { slowOperationsFor } from "../../src/probes/http/slow-operations.ts";
import { loadTools } from "../../src/tools/servers/load-server.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import {
  fixtureMap,
  fixtureTarget,
  operation,
  type RunningApp,
  startApp,
} from "./fixtures/fixture-target.ts";

// The run paces operations other probes found slow (no further request to them). time_endpoints is the
// probe that measures exactly those: it must still time them, and a fast one next to it stays silent.

let app: RunningApp;
beforeAll(async () => {
  app = await startApp("typescript");
});
afterAll(async () => {
  await app?.stop();
});

describe("time_endpoints and the run's pacing of slow operations", () => {
  it("times an operation another probe already found slow", async () => {
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: fixtureMap(app) });
    const pacing = slowOperationsFor(context);
    // What an earlier probe leaves behind: two answers of the report in a row took 2 s, so it is paced now.
    for (let strike = 0; strike < 2; strike += 1) {
      expect(await pacing.enter("GET /api/reports/summary")).toBe(true);
      pacing.leave("GET /api/reports/summary", 2_000);
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(pacing.report()).toEqual({ "GET /api/reports/summary": 0 });
    const tool = loadTools.find((candidate) => candidate.name === "time_endpoints")!;
    const result = await callTool(tool, { operation: "GET /api/reports/summary", samples: 3 }, context);
    if (!result.ok) throw new Error(result.error);
    const answer = result.data as { candidates: EnvelopeDraft[] };
    expect(answer.candidates.map((draft) => `${draft.defect_class} ${draft.location.value}`)).toEqual([
      "slow-endpoint GET /api/reports/summary",
    ]);
    const fast = await callTool(tool, { operation: "GET /api/stats", samples: 3 }, context);
    expect(fast.ok && (fast.data as { candidates: EnvelopeDraft[] }).candidates).toEqual([]);
  }, 30_000);

  it("times a report listed after many other reads: aggregates go first, before the cap on operations", async () => {
    const map = fixtureMap(app);
    const others = Array.from({ length: 90 }, (_, index) => operation("GET", `/api/other-${index}`));
    const report = map.operations.find((candidate) => candidate.path === "/api/reports/summary")!;
    map.operations = [...others, ...map.operations.filter((candidate) => candidate !== report), report];
    const context = fakeRunContext({ target: fixtureTarget(app), systemMap: map });
    const tool = loadTools.find((candidate) => candidate.name === "time_endpoints")!;
    const result = await callTool(tool, { samples: 2 }, context);
    if (!result.ok) throw new Error(result.error);
    const answer = result.data as { candidates: EnvelopeDraft[] };
    expect(answer.candidates.map((draft) => `${draft.defect_class} ${draft.location.value}`)).toEqual([
      "slow-endpoint GET /api/reports/summary",
    ]);
  }, 60_000);
});
