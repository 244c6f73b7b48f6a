import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timeEndpoints } from "../../src/probes/load/endpoint-timing.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// time_endpoints spends its requests where they tell something: a clearly fast read is timed once after
// its warm-up, a clearly slow one twice plus a confirmation, and one close to the budget every time asked.

const WORK_MS: Record<string, number> = { "/api/fast": 0, "/api/slow": 1000, "/api/close": 260 };
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

describe("time_endpoints samples adaptively", () => {
  it("times a fast read once, confirms a slow one, and samples one near the budget in full", async () => {
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
    const context = probeContext({ profile, map, agent: "LOAD" });
    const outcome = await timeEndpoints(context, { budget_ms: 400, samples: 3 });
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["GET /api/slow"]);
    // Warm-up + one timed request.
    expect(calls["/api/fast"]).toBe(2);
    // Warm-up + two timed requests over twice the budget + two confirmations.
    expect(calls["/api/slow"]).toBe(5);
    // Warm-up + all three samples: over half the budget, under the budget.
    expect(calls["/api/close"]).toBe(4);
    const timed = outcome.stats.operations as Array<{ operation: string; times_ms?: number[] }>;
    const times = Object.fromEntries(timed.map((each) => [each.operation, each.times_ms?.length]));
    expect(times).toEqual({ "GET /api/fast": 1, "GET /api/slow": 4, "GET /api/close": 3 });
  }, 30_000);
});
