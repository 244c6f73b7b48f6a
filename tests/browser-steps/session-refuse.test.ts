import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSessionFor } from "../../src/probes/browser/browser-session.ts";
import { renderPage } from "../../src/probes/guide/rendered-page.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import type { TextServer } from "../support/text-server.ts";
import { startTextServer } from "../support/text-server.ts";

// The run's browser never sends what the profile forbids or what looks like a route that rebuilds the
// app's data, whichever tool opened the tab: a walker following a "Start over" link (an excluded
// operation) or a "rollback" one, a page whose own script calls the URL the profile's reset command calls
// or a `createdb` route, a control clicked that navigates there. Each would wipe what the run's other
// agents created and measure.

let server: TextServer;
let context: FakeRunContext;
const received: string[] = [];

const HOME = `<!doctype html><html lang="en"><head><title>Home</title></head><body><main><h1>Home</h1>
<a id="over" href="/restart-tour">Start over</a>
<script>fetch("/wipe").catch(() => {}); fetch("/api/createdb").catch(() => {}); fetch("/api/ping").catch(() => {});</script></main></body></html>`;

beforeAll(async () => {
  server = await startTextServer((request, _text, response) => {
    received.push(`${request.method} ${request.url}`);
    response
      .writeHead(200, { "content-type": "text/html" })
      .end(request.url === "/home" ? HOME : "<p>ok</p>");
  });
  const profile = profileFor({
    name: "site",
    source: {},
    environment: {
      mode: "external",
      base_url: server.baseUrl,
      reset: { command: `curl -s ${server.baseUrl}/wipe` },
    },
    api: { exclude: ["GET /restart-tour"] },
  });
  const map = systemMapFor({
    target: "site",
    baseUrl: server.baseUrl,
    document: { openapi: "3.0.0", paths: {} },
  });
  context = probeContext({ profile, map, agent: "GUIDE" });
}, 60_000);

afterAll(async () => {
  await closeRunServices(context);
  await server.close();
});

describe("the run's browser and the profile's forbidden requests", () => {
  it("never sends an excluded operation or the reset URL, by navigation, script or click", async () => {
    const session = browserSessionFor(context);
    const origin = new URL(server.baseUrl).origin;
    const browsing = await session.context({ role: "anonymous", headers: async () => ({}) }, origin);

    const walked = await renderPage(session, browsing, origin, "/restart-tour");
    expect(walked.page.error).toMatch(/ERR_BLOCKED_BY_CLIENT/);
    // Named like a route that rebuilds the data: refused without the profile saying so, as the client does.
    const rollback = await renderPage(session, browsing, origin, "/admin/rollback");
    expect(rollback.page.error).toMatch(/ERR_BLOCKED_BY_CLIENT/);

    const opened = await session.open(browsing, `${server.baseUrl}/home`);
    await expect.poll(() => received.includes("GET /api/ping"), { timeout: 20_000 }).toBe(true);
    await opened.page.click("#over", { timeout: 10_000 }).catch(() => {});
    await opened.page.waitForTimeout(500);
    await opened.page.close();

    expect(received).toContain("GET /home");
    expect(received.filter((request) => /restart-tour|wipe|createdb|rollback/.test(request))).toEqual([]);
  }, 60_000);
});
