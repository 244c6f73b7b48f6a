import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { timeEndpoints } from "../../src/probes/load/endpoint-timing.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// A report that grows with the data until it outlasts every client's patience: no answer within the
// timeout is slower than any budget. A read that answers at once stays silent, and so does one that
// stalled once and then answered.

let server: http.Server;
let baseUrl: string;
let flakyCalls = 0;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const answer = () => response.writeHead(200, { "content-type": "application/json" }).end("{}");
    if (request.url === "/api/report") setTimeout(answer, 1500);
    else if (request.url === "/api/flaky") {
      flakyCalls += 1;
      if (flakyCalls === 1) setTimeout(answer, 1500);
      else answer();
    } else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("time_endpoints on a read that never answers in time", () => {
  it("reports it slow after a second request also goes unanswered, and nothing else", async () => {
    const read = { get: { responses: { "200": { description: "ok" } } } };
    const document = {
      openapi: "3.0.3",
      info: { title: "reports", version: "1" },
      paths: { "/api/report": read, "/api/fast": read, "/api/flaky": read },
    };
    const map = systemMapFor({ target: "reports", baseUrl, document });
    const profile = profileFor({
      name: "reports",
      source: {},
      environment: { mode: "external", base_url: baseUrl },
    });
    const outcome = await timeEndpoints(probeContext({ profile, map, agent: "LOAD" }), { timeout_ms: 400 });
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["GET /api/report"]);
    expect(outcome.candidates[0]!.title).toMatch(
      /^GET \/api\/report gives no answer within \d+ ms \(twice in a row\)$/,
    );
  }, 20_000);
});
