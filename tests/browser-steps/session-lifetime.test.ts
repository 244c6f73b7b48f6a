import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSessionFor } from "../../src/probes/browser/browser-session.ts";
import type { ToolContext } from "../../src/tools/context.ts";
import { closeAgentServices, closeRunServices } from "../../src/tools/run-end.ts";
import { fakeRunContext, testAgent } from "../support/fake-run-context.ts";

// One browser per run, shared by the agents that use it: BROWSER finishing first must not close it under
// GUIDE (an earlier nightly's GUIDE failed with "Target page, context or browser has been closed"); each
// agent's end closes only what it held, and the run's end closes the browser.

let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  server = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>t</title><p>hi</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Two agent invocations of one run: their contexts share the run's services. */
function twoAgents(): { browser: ToolContext; guide: ToolContext; run: ToolContext } {
  const run = fakeRunContext();
  return {
    run,
    browser: { ...run, agent: testAgent({ name: "BROWSER" }), invocation: "browser-2" },
    guide: { ...run, agent: testAgent({ name: "GUIDE" }), invocation: "guide-3" },
  };
}

const anonymous = { role: "anonymous", headers: async () => ({}) };

describe("the run's browser across agents", () => {
  it("stays open for the second agent when the first ends, and closes at the run's end", async () => {
    const { run, browser, guide } = twoAgents();
    const session = browserSessionFor(browser);
    expect(browserSessionFor(guide)).toBe(session);
    const origin = new URL(baseUrl).origin;
    try {
      const first = await session.open(await session.context(anonymous, origin), `${baseUrl}/a`);
      const second = await session.open(await session.context(anonymous, origin), `${baseUrl}/b`);
      expect(first.response?.status()).toBe(200);
      const chromium = await session.browser();

      await closeAgentServices(browser);
      // GUIDE's page, context and browser are untouched, and it can go on opening pages.
      expect(chromium.isConnected()).toBe(true);
      expect(second.page.isClosed()).toBe(false);
      expect(await second.page.title()).toBe("t");
      const more = await session.open(await session.context(anonymous, origin), `${baseUrl}/c`);
      expect(more.error).toBeUndefined();
      expect(more.response?.status()).toBe(200);
      expect(session.heldBy()).toEqual(["guide-3"]);

      await closeRunServices(run);
      expect(chromium.isConnected()).toBe(false);
      await expect(session.browser()).rejects.toThrow(/already closed/);
    } finally {
      await session.close();
    }
  }, 60_000);

  it("gives the browser's memory back once no agent holds it, and a later agent launches it again", async () => {
    const { run, browser, guide } = twoAgents();
    const session = browserSessionFor(browser);
    try {
      const firstChromium = await session.browser();
      await closeAgentServices(browser);
      expect(firstChromium.isConnected()).toBe(false);

      // A later agent (GUIDE starting after BROWSER ended) gets a browser of its own.
      expect(browserSessionFor(guide)).toBe(session);
      const again = await session.open(
        await session.context(anonymous, new URL(baseUrl).origin),
        `${baseUrl}/d`,
      );
      expect(again.response?.status()).toBe(200);
      await closeAgentServices(guide);
      expect(session.heldBy()).toEqual([]);
    } finally {
      await closeRunServices(run);
    }
  }, 60_000);

  it("is held by nobody when used outside an agent invocation, and lives until the run ends", async () => {
    const run = fakeRunContext();
    const session = browserSessionFor(run);
    try {
      const chromium = await session.browser();
      await closeAgentServices(run);
      expect(session.heldBy()).toEqual([]);
      expect(chromium.isConnected()).toBe(true);
      await closeRunServices(run);
      expect(chromium.isConnected()).toBe(false);
    } finally {
      await session.close();
    }
  }, 60_000);
});
