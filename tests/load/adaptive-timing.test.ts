import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slowOperationsFor } from "../../src/probes/http/slow-operations.ts";
import { timeEndpoints } from "../../src/probes/load/endpoint-timing.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// time_endpoints spends its requests where they tell something: a clearly fast read is timed once after
// its warm-up, a clearly slow one twice plus a confirmation, one whose warm-up was far over the budget only
// confirmed once, and one close to the budget every time asked. Reads that aggregate go first.

const WORK_MS: Record<string, number> = {
  "/api/fast": 0,
  "/api/slow": 1000,
  "/api/close": 260,
  "/api/reports/weekly": 1700,
};
const calls: Record<string, number> = {};
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const path = request.url ?? "/";
    calls[path] = (calls[path] ?? 0) + 1;
    setTimeout(
      () => response.writeHead(200, { "content-type": "application/json" }).end("{}"),
      WORK_MS[path] ?? 0,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function readsContext() {
  const read = { get: { responses: { "200": { description: "ok" } } } };
  const document = {
    openapi: "3.0.3",
    info: { title: "reads", version: "1" },
    paths: Object.fromEntries(Object.keys(WORK_MS).map((path) => [path, read])),
  };
  const map = systemMapFor({ target: "reads", baseUrl, document });
  const profile = profileFor({
    name: "reads",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
  });
  return probeContext({ profile, map, agent: "LOAD" });
}

describe("time_endpoints samples adaptively", () => {
  it("times a fast read once, confirms a slow one, and samples one near the budget in full", async () => {
    const context = readsContext();
    const outcome = await timeEndpoints(context, { budget_ms: 400, samples: 3 });
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual([
      "GET /api/reports/weekly",
      "GET /api/slow",
    ]);
    // A warm-up over four times the budget is the first round; one paced confirmation as slow, the second.
    expect(calls["/api/reports/weekly"]).toBe(2);
    // Warm-up + one timed request.
    expect(calls["/api/fast"]).toBe(2);
    // Warm-up + two timed requests over twice the budget + two confirmations.
    expect(calls["/api/slow"]).toBe(5);
    // Warm-up + all three samples: over half the budget, under the budget.
    expect(calls["/api/close"]).toBe(4);
    const timed = outcome.stats.operations as Array<{ operation: string; times_ms?: number[] }>;
    const times = Object.fromEntries(timed.map((each) => [each.operation, each.times_ms?.length]));
    expect(times).toEqual({
      "GET /api/reports/weekly": 2,
      "GET /api/fast": 1,
      "GET /api/slow": 4,
      "GET /api/close": 3,
    });
    expect(timed[0]!.operation).toBe("GET /api/reports/weekly");
  }, 30_000);

  it("sends a read other probes already saw far over the budget once, and counts their answers", async () => {
    const context = readsContext();
    const pacing = slowOperationsFor(context);
    expect(await pacing.enter("GET /api/reports/weekly")).toBe(true);
    pacing.leave("GET /api/reports/weekly", 6_000);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const before = calls["/api/reports/weekly"] ?? 0;
    const outcome = await timeEndpoints(context, { budget_ms: 400, operation: "GET /api/reports/weekly" });
    if (typeof outcome === "string") throw new Error(outcome);
    expect(calls["/api/reports/weekly"]! - before).toBe(1);
    expect(outcome.candidates).toHaveLength(1);
    expect(outcome.candidates[0]!.summary).toMatch(
      /timed 1 time\(s\) on its own, after other probes of the run had seen it take 6000 ms/,
    );
  }, 30_000);

  it("takes a slow answer another probe gets right after its own first round as the confirmation", async () => {
    const context = readsContext();
    const pacing = slowOperationsFor(context);
    const key = "GET /api/reports/weekly";
    const before = calls["/api/reports/weekly"] ?? 0;
    // Another probe takes the operation's turn while the timing probe's warm-up runs, and sends once that
    // is answered: its answer is slow on its own, and the probe waits for it instead of sending again.
    const other = (async () => {
      expect(await pacing.enter(key)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const started = performance.now();
      await fetch(`${baseUrl}/api/reports/weekly`).then((response) => response.text());
      pacing.leave(key, Math.round(performance.now() - started));
    })();
    const outcome = await timeEndpoints(context, { budget_ms: 400, operation: key });
    await other;
    if (typeof outcome === "string") throw new Error(outcome);
    expect(calls["/api/reports/weekly"]! - before).toBe(2);
    expect(outcome.candidates).toHaveLength(1);
    expect(outcome.candidates[0]!.summary).toMatch(
      /timed 1 time\(s\) on its own, and the requests other probes of the run sent it next took 17\d\d ms/,
    );
  }, 30_000);

  it("does not time again a read other probes got answered quickly three times, nor skips on two", async () => {
    const context = readsContext();
    const pacing = slowOperationsFor(context);
    const answer = async (key: string, times: number) => {
      for (let index = 0; index < times; index += 1) {
        expect(await pacing.enter(key)).toBe(true);
        pacing.answered(key, 20);
        pacing.leave(key, 20);
      }
    };
    await answer("GET /api/fast", 3);
    await answer("GET /api/close", 2);
    const before = { fast: calls["/api/fast"] ?? 0, close: calls["/api/close"] ?? 0 };
    const fast = await timeEndpoints(context, { budget_ms: 400, operation: "GET /api/fast" });
    const close = await timeEndpoints(context, { budget_ms: 400, operation: "GET /api/close" });
    if (typeof fast === "string" || typeof close === "string") throw new Error("time_endpoints refused");
    expect(calls["/api/fast"]! - before.fast).toBe(0);
    expect(calls["/api/close"]! - before.close).toBeGreaterThan(0);
    const timed = fast.stats.operations as Array<{ operation: string; result?: string }>;
    expect(timed).toMatchObject([
      { operation: "GET /api/fast", result: expect.stringMatching(/not timed again/) },
    ]);
  }, 30_000);
});
