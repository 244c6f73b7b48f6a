import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slowOperationsFor } from "../../src/probes/http/slow-operations.ts";
import { timeEndpoints } from "../../src/probes/load/endpoint-timing.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// A report that grows with the data until it outlasts every client's patience: no answer within the
// timeout is slower than any budget. A read that answers at once stays silent, and so does one that
// stalled once and then answered.

let server: http.Server;
let baseUrl: string;
let flakyCalls = 0;
let reportCalls = 0;
let serialServer: http.Server;
let serialUrl: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const answer = () => response.writeHead(200, { "content-type": "application/json" }).end("{}");
    if (request.url === "/api/report") {
      reportCalls += 1;
      setTimeout(answer, 1500);
    } else if (request.url === "/api/flaky") {
      flakyCalls += 1;
      if (flakyCalls === 1) setTimeout(answer, 1500);
      else answer();
    } else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A single-threaded server: one request at a time, in arrival order; the report holds it for 1.5 s and
  // every other request waits behind it, whether or not its client still waits.
  let free = Promise.resolve();
  serialServer = http.createServer((request, response) => {
    const work = request.url === "/api/report" ? 1500 : 0;
    free = free.then(
      () =>
        new Promise<void>((done) =>
          setTimeout(() => {
            if (!response.destroyed)
              response.writeHead(200, { "content-type": "application/json" }).end("{}");
            done();
          }, work),
        ),
    );
  });
  await new Promise<void>((resolve) => serialServer.listen(0, "127.0.0.1", resolve));
  serialUrl = `http://127.0.0.1:${(serialServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const each of [server, serialServer]) {
    each.closeAllConnections();
    await new Promise<void>((resolve) => each.close(() => resolve()));
  }
});

function readsAt(url: string, paths: string[]) {
  const read = { get: { responses: { "200": { description: "ok" } } } };
  const document = {
    openapi: "3.0.3",
    info: { title: "reports", version: "1" },
    paths: Object.fromEntries(paths.map((path) => [path, read])),
  };
  const map = systemMapFor({ target: "reports", baseUrl: url, document });
  const profile = profileFor({
    name: "reports",
    source: {},
    environment: { mode: "external", base_url: url },
  });
  return probeContext({ profile, map, agent: "LOAD" });
}

describe("time_endpoints on a read that never answers in time", () => {
  it("reports it slow after a second request also goes unanswered, and nothing else", async () => {
    const context = readsAt(baseUrl, ["/api/report", "/api/fast", "/api/flaky"]);
    const outcome = await timeEndpoints(context, { timeout_ms: 400 });
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["GET /api/report"]);
    expect(outcome.candidates[0]!.title).toMatch(
      /^GET \/api\/report gives no answer within \d+ ms \(twice in a row\)$/,
    );
  }, 20_000);

  it("counts the run's earlier slow answers as the second signal, and sends the read once", async () => {
    const context = readsAt(baseUrl, ["/api/report"]);
    // Another probe of the run met the report taking 9 s: the pacing stopped sending it.
    const pacing = slowOperationsFor(context);
    await pacing.enter("GET /api/report");
    pacing.leave("GET /api/report", 9000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    reportCalls = 0;
    const outcome = await timeEndpoints(context, { timeout_ms: 400 });
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.title)).toEqual([
      expect.stringMatching(
        /^GET \/api\/report gives no answer within \d+ ms, and took 9 s for other probes$/,
      ),
    ]);
    expect(reportCalls).toBe(1);
  }, 20_000);

  it("blames only the slow read on a single-threaded server, not the reads queued behind it", async () => {
    const context = readsAt(serialUrl, ["/api/report", "/api/admin/users", "/api/admin/settings"]);
    const outcome = await timeEndpoints(context, { timeout_ms: 400 });
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["GET /api/report"]);
  }, 30_000);
});
