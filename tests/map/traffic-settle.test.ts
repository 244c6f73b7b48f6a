import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordTraffic } from "../../src/probes/traffic/record-traffic.ts";

// A page counts as settled once its own API calls and scripts have gone quiet (not every asset): the calls
// it makes later are still recorded when they follow a lazily loaded script or an earlier call.

let server: http.Server;
let baseUrl: string;

const PAGE = `<!doctype html><html><body><script>
  // A route's code loaded once the page has loaded, the way a code-split app loads it.
  addEventListener("load", () => setTimeout(() => {
    const chunk = document.createElement("script");
    chunk.src = "/chunk.js";
    document.body.appendChild(chunk);
  }, 0));
  fetch("/api/first").then(() => fetch("/api/second"));
</script></body></html>`;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://x").pathname;
    const answer = (type: string, body: string, delay = 0) =>
      setTimeout(() => {
        if (!response.destroyed) response.writeHead(200, { "content-type": type }).end(body);
      }, delay);
    if (path === "/") answer("text/html", PAGE);
    else if (path === "/chunk.js") answer("text/javascript", 'fetch("/api/from-chunk");', 2000);
    else if (path === "/api/first") answer("application/json", "{}", 400);
    else if (path.startsWith("/api/")) answer("application/json", "{}");
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("recordTraffic's page settle", () => {
  it("waits for calls that follow a lazily loaded script or an earlier call", async () => {
    const traffic = await recordTraffic(
      baseUrl,
      [{ role: "anonymous", headers: async () => ({}), paths: ["/"] }],
      {
        settleMs: 5000,
        pageTimeoutMs: 10_000,
      },
    );
    const calls = traffic.requests.map((request) => new URL(request.url).pathname).sort();
    expect(calls).toEqual(["/api/first", "/api/from-chunk", "/api/second"]);
    expect(traffic.roles[0]?.failures).toEqual([]);
  }, 60_000);
});
