import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrowserSession } from "../../src/probes/browser/browser-session.ts";

// A target the run restarted may have forgotten every session: a browser context made before the restart
// must sign in again before its next page, or every pass holding it browses as nobody.

let server: http.Server;
let baseUrl: string;
const cookiesSeen: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    if (request.url === "/page") cookiesSeen.push(request.headers.cookie ?? "");
    response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>t</title><p>hi</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("a browser context's sign-in", () => {
  it("is renewed in place before the next page once the target was restarted, and only then", async () => {
    let signIns = 0;
    let restarts = 0;
    const role = {
      role: "member",
      headers: async () => {
        signIns += 1;
        return { cookie: `sid=session-${signIns}` };
      },
      restarts: () => restarts,
    };
    const session = new BrowserSession();
    try {
      const context = await session.context(role, new URL(baseUrl).origin);
      const visit = async () => (await session.open(context, `${baseUrl}/page`)).page.close();
      await visit();
      await visit();
      expect(cookiesSeen).toEqual(["sid=session-1", "sid=session-1"]);

      restarts = 1;
      await visit();
      await visit();
      expect(cookiesSeen.slice(2)).toEqual(["sid=session-2", "sid=session-2"]);
      expect(signIns).toBe(2);
    } finally {
      await session.close();
    }
  }, 60_000);
});
