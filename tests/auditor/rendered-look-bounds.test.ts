import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { look } from "../../src/probes/auditor/xss-rendered-look.ts";
import { BrowserSession } from "../../src/probes/browser/browser-session.ts";

// A page whose script never yields once it has loaded: its renderer answers no DOM read and no close. The
// stored-XSS look gives up on it after its bound instead of holding AUDITOR, and the run, for good.

let server: http.Server;
let baseUrl: string;
let session: BrowserSession;

beforeAll(async () => {
  server = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(
      `<!doctype html><html lang="en"><head><title>Board</title></head><body><p>Board</p>
       <script>setTimeout(() => { for (;;) {} }, 100);</script></body></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  session = new BrowserSession();
}, 60_000);

afterAll(async () => {
  await session.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("a look at a page whose renderer is stuck", () => {
  it("answers nothing shown once its bound passed, rather than waiting for the renderer", async () => {
    const context = await session.context({ role: "anonymous", headers: async () => ({}) }, baseUrl);
    const seen = await look(session, context, `${baseUrl}/board`, ["<qaas-x1>"], undefined);
    expect([...seen.shown.keys()]).toEqual([]);
  }, 40_000);
});
