import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrowserSession } from "../../src/probes/browser/browser-session.ts";
import { renderPage } from "../../src/probes/guide/rendered-page.ts";
import { startTextServer, type TextServer } from "../support/text-server.ts";

// A page read by GUIDE's walk counts the links its script renders from an API call made after `load` (a
// menu fetched on start-up), even when the API answers slowly; and the tab it was read in, lent again, reads
// the next page with nothing of this one.

let server: TextServer;

const SHELL = `<!doctype html><title>Shop</title><nav id="menu"></nav><script>
addEventListener("load", () => {
  fetch("/api/menu").then((answer) => answer.json()).then((items) => {
    for (const item of items) {
      const a = document.createElement("a"); a.href = item.path; a.textContent = item.label;
      document.getElementById("menu").appendChild(a);
    }
  });
});
</script>`;

beforeAll(async () => {
  server = await startTextServer((request, _text, response) => {
    if (request.url === "/api/menu") {
      // Slower than a quiet moment after load: read at once, the page would show no menu.
      setTimeout(() => {
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify([{ path: "/orders", label: "Orders" }]));
      }, 700);
      return;
    }
    if (request.url === "/plain") {
      response
        .writeHead(200, { "content-type": "text/html" })
        .end('<!doctype html><a href="/about">About</a>');
      return;
    }
    response.writeHead(200, { "content-type": "text/html" }).end(SHELL);
  });
});

afterAll(() => server.close());

describe("a page rendered for the walk", () => {
  it("holds the links a script rendered from a slow API call after load", async () => {
    const session = new BrowserSession();
    try {
      const origin = new URL(server.baseUrl).origin;
      const context = await session.context({ role: "anonymous", headers: async () => ({}) }, origin);
      const { page } = await renderPage(session, context, origin, "/");
      expect(page.links).toContain("/orders");
      // The same tab, lent again, reads the next page alone.
      const { page: next } = await renderPage(session, context, origin, "/plain");
      expect(next.links).toEqual(["/about"]);
    } finally {
      await session.close();
    }
  });
});
