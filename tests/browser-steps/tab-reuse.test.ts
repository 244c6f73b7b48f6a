import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrowserSession } from "../../src/probes/browser/browser-session.ts";
import { closePage, loadPage } from "../../src/probes/browser/page-load.ts";
import { startTextServer, type TextServer } from "../support/text-server.ts";

// Tabs are lent and given back instead of opened and closed per page: a given-back tab must start the next
// page as a new tab would — nothing of the last page still running or logged, no way back to it, no
// refusal of the last load applied to the next.

let server: TextServer;
let baseUrl: string;
const received: string[] = [];

beforeAll(async () => {
  server = await startTextServer((request, _text, response) => {
    received.push(`${request.method} ${request.url}`);
    if (request.url === "/noisy") {
      // Logs and calls home every 50 ms for as long as it is open.
      response
        .writeHead(200, { "content-type": "text/html" })
        .end(
          '<!doctype html><title>noisy</title><script>setInterval(() => { console.error("still here"); fetch("/beacon"); }, 50)</script>',
        );
      return;
    }
    if (request.url === "/writes") {
      response
        .writeHead(200, { "content-type": "text/html" })
        .end('<!doctype html><title>w</title><script>fetch("/save", { method: "POST" })</script>');
      return;
    }
    response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>quiet</title>");
  });
  baseUrl = server.baseUrl;
});

afterAll(() => server.close());

const anonymous = { role: "anonymous", headers: async () => ({}) };

describe("a tab given back", () => {
  it("is lent again for the same context, with a fresh log and nothing of the last page", async () => {
    const session = new BrowserSession();
    try {
      const context = await session.context(anonymous, new URL(baseUrl).origin);
      const first = await session.open(context, `${baseUrl}/noisy`);
      await expect.poll(() => first.log.console.length, { timeout: 10_000 }).toBeGreaterThan(0);
      await session.giveBack(first.page);
      const beaconsAfter = received.filter((line) => line.endsWith("/beacon")).length;

      const second = await session.open(context, `${baseUrl}/quiet`);
      expect(second.page).toBe(first.page);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The noisy page's timer died with its document: it neither logs into the new page's log nor calls.
      expect(second.log.console).toEqual([]);
      expect(second.log.network.map((entry) => new URL(entry.url).pathname)).toEqual(["/quiet"]);
      expect(received.filter((line) => line.endsWith("/beacon")).length).toBe(beaconsAfter);
      // Back leads nowhere the last user of the tab went.
      expect(await second.page.evaluate(() => history.length)).toBeLessThanOrEqual(2);
      expect(await second.page.evaluate(() => document.referrer)).toBe("");
      await session.giveBack(second.page);

      const other = await session.context({ ...anonymous, role: "other" }, new URL(baseUrl).origin);
      const elsewhere = await session.borrowPage(other);
      expect(elsewhere.page).not.toBe(first.page);
      expect(elsewhere.page.context()).toBe(other);
      await session.giveBack(elsewhere.page);
    } finally {
      await session.close();
    }
  });

  it("does not refuse, for the next page, the writes the last load refused", async () => {
    const session = new BrowserSession();
    try {
      const context = await session.context(anonymous, new URL(baseUrl).origin);
      const readOnly = await loadPage(session, context, `${baseUrl}/writes`, { writesAllowed: false });
      expect(readOnly.blocked).toEqual([`POST ${baseUrl}/save`]);
      await closePage(session, readOnly);
      const saves = received.filter((line) => line === "POST /save").length;

      // Opened by a tool that refuses nothing of its own (the walk of GUIDE): the page's write goes out.
      const walked = await session.open(context, `${baseUrl}/writes`);
      expect(walked.page).toBe(readOnly.page);
      await expect
        .poll(() => received.filter((line) => line === "POST /save").length, { timeout: 10_000 })
        .toBe(saves + 1);
      await session.giveBack(walked.page);

      const counted = await loadPage(session, context, `${baseUrl}/quiet`, { writesAllowed: false });
      expect(counted.page).toBe(readOnly.page);
      expect(counted.blocked).toEqual([]);
      expect(counted.requestsStarted()).toBe(1);
      await closePage(session, counted);
    } finally {
      await session.close();
    }
  });

  it("keeps only a few tabs idle, closing the oldest", async () => {
    const session = new BrowserSession();
    try {
      const origin = new URL(baseUrl).origin;
      const pages: Page[] = [];
      for (let index = 0; index < 8; index += 1) {
        const context = await session.context({ ...anonymous, role: `role${index}` }, origin);
        pages.push((await session.open(context, `${baseUrl}/quiet`)).page);
      }
      for (const page of pages) await session.giveBack(page);
      await expect.poll(() => pages.filter((page) => page.isClosed()).length, { timeout: 10_000 }).toBe(4);
      expect(pages.slice(0, 4).every((page) => page.isClosed())).toBe(true);
    } finally {
      await session.close();
    }
  });
});
