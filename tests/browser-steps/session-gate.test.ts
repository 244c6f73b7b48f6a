import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrowserSession } from "../../src/probes/browser/browser-session.ts";

// The browser's requests to the target pass the run's measurement windows like any probe's: a page load
// waits while a window is held, and the window learns when each request was answered.

let server: http.Server;
let baseUrl: string;
const received: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    received.push(request.url ?? "/");
    // Never answered: the page that asks for it is closed while it waits.
    if (request.url === "/hang") return;
    if (request.url === "/late-page") {
      response
        .writeHead(200, { "content-type": "text/html" })
        .end('<!doctype html><title>t</title><script>setTimeout(() => fetch("/late"), 300)</script>');
      return;
    }
    if (request.url === "/hanging-page") {
      response
        .writeHead(200, { "content-type": "text/html" })
        .end('<!doctype html><title>t</title><script>fetch("/hang")</script>');
      return;
    }
    response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>t</title><p>hi</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A gate that holds every request until `open`, counting who entered and who left. */
function heldGate() {
  let release: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  const gate = {
    entered: 0,
    left: 0,
    open: () => release(),
    enter: async () => {
      gate.entered += 1;
      await opened;
      return () => {
        gate.left += 1;
      };
    },
  };
  return gate;
}

/** A browser session whose requests pass a held gate, and an anonymous context on the test server. */
async function gatedContext() {
  const gate = heldGate();
  const session = new BrowserSession({ gate: gate.enter });
  const context = await session.context(
    { role: "anonymous", headers: async () => ({}) },
    new URL(baseUrl).origin,
  );
  return { gate, session, context };
}

describe("the browser session's gate", () => {
  it("holds the target's requests until the gate opens and reports each answered", async () => {
    const { gate, session, context } = await gatedContext();
    try {
      const loading = session.open(context, `${baseUrl}/page`);
      // However busy the machine, the request reaches the gate and waits there.
      await expect.poll(() => gate.entered, { timeout: 20_000 }).toBeGreaterThan(0);
      expect(received).toEqual([]);
      gate.open();
      const page = await loading;
      expect(page.response?.status()).toBe(200);
      expect(received).toContain("/page");
      await page.page.close();
      expect(gate.left).toBeGreaterThan(0);
    } finally {
      await session.close();
    }
  }, 60_000);

  it("lets go of a request cut off by its tab closing while the context stays open", async () => {
    const { gate, session, context } = await gatedContext();
    gate.open();
    try {
      const page = await session.open(context, `${baseUrl}/hanging-page`);
      await expect.poll(() => received.includes("/hang"), { timeout: 20_000 }).toBe(true);
      expect(gate.left).toBeLessThan(gate.entered);
      await page.page.close();
      await expect.poll(() => gate.left, { timeout: 10_000 }).toBe(gate.entered);
    } finally {
      await session.close();
    }
  }, 60_000);

  it("lets go of a request whose context closed while it waited at the gate", async () => {
    const { gate, session, context } = await gatedContext();
    try {
      const loading = session.open(context, `${baseUrl}/abandoned`, 5_000).catch(() => undefined);
      await expect.poll(() => gate.entered, { timeout: 20_000 }).toBeGreaterThan(0);
      await context.close();
      // The gate opens only after the context has gone: what it let in must still be let out.
      gate.open();
      await loading;
      await expect.poll(() => gate.left, { timeout: 10_000 }).toBe(gate.entered);
    } finally {
      await session.close();
    }
  }, 60_000);

  it("lets go of a request cut off by its tab moving on to another page", async () => {
    const { gate, session, context } = await gatedContext();
    gate.open();
    try {
      const hangsBefore = received.filter((url) => url === "/hang").length;
      const page = await session.open(context, `${baseUrl}/hanging-page`);
      await expect
        .poll(() => received.filter((url) => url === "/hang").length, { timeout: 20_000 })
        .toBe(hangsBefore + 1);
      expect(gate.left).toBeLessThan(gate.entered);
      await session.giveBack(page.page);
      expect(page.page.isClosed()).toBe(false);
      await expect.poll(() => gate.left, { timeout: 10_000 }).toBe(gate.entered);
    } finally {
      await session.close();
    }
  }, 60_000);

  it("lets go of a request its tab cancelled, moving on, while it waited at the gate", async () => {
    let held: Promise<void> | undefined;
    let release = () => {};
    const counts = { entered: 0, left: 0 };
    const session = new BrowserSession({
      gate: async () => {
        counts.entered += 1;
        await held;
        return () => {
          counts.left += 1;
        };
      },
    });
    try {
      const context = await session.context(
        { role: "anonymous", headers: async () => ({}) },
        new URL(baseUrl).origin,
      );
      const page = await session.open(context, `${baseUrl}/late-page`);
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const enteredBefore = counts.entered;
      // The page's late call reaches the gate and waits there; the tab moves on before the gate opens.
      await expect.poll(() => counts.entered, { timeout: 20_000 }).toBeGreaterThan(enteredBefore);
      await session.giveBack(page.page);
      release();
      await expect.poll(() => counts.left, { timeout: 10_000 }).toBe(counts.entered);
      expect(received).not.toContain("/late");
    } finally {
      await session.close();
    }
  }, 60_000);
});
