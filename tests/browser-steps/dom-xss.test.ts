import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "../../src/map/system-map.ts";
import { probeDomXss } from "../../src/probes/browser/dom-xss.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// DOM-based XSS is found where a page's own script writes part of the URL into HTML or a link, and only
// there: a page that writes it as text is safe, and one the server itself echoes is reflected XSS (another
// probe's), not reported here.

let server: http.Server;
let baseUrl: string;

const shell = (script: string, body = "") =>
  `<!doctype html><html lang="en"><head><title>t</title></head><body><div id="out"></div>${body}<script>${script}</script></body></html>`;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    const html = (text: string) => response.writeHead(200, { "content-type": "text/html" }).end(text);
    if (url.pathname === "/search")
      html(
        shell(
          `document.getElementById("out").innerHTML = "Results for " + new URLSearchParams(location.search).get("q");`,
        ),
      );
    else if (url.pathname === "/welcome")
      html(shell(`document.write("<p>Hello " + decodeURIComponent(location.hash.slice(1)) + "</p>");`));
    else if (url.pathname === "/back")
      html(
        shell(
          `const a = document.createElement("a"); a.href = new URLSearchParams(location.search).get("next") || "/"; a.textContent = "Back"; document.body.append(a);`,
        ),
      );
    else if (url.pathname === "/prices")
      // A picker that writes the chosen option from the URL inside its <select>; only a GET form names it.
      html(
        `<!doctype html><html lang="en"><head><title>t</title></head><body><form method="get"><script>
          const at = location.href.indexOf("currency=");
          document.write("<select name='currency'>");
          if (at >= 0) document.write("<option>" + decodeURI(location.href.slice(at + 9)) + "</option>");
          document.write("<option>EUR</option></select>");
        </script><button>Show</button></form></body></html>`,
      );
    else if (url.pathname === "/tabs")
      // The tab named in the fragment, opened by a string a timer runs.
      html(
        shell(
          `window.showTab = (tab) => { document.getElementById("out").textContent = tab; }; setTimeout("showTab('" + decodeURIComponent(location.hash.slice(1) || "overview") + "')", 0);`,
        ),
      );
    else if (url.pathname === "/run")
      // A command from the fragment, run as code.
      html(
        shell(
          `const command = decodeURIComponent(location.hash.slice(1)); if (command) setTimeout(command, 0);`,
        ),
      );
    else if (url.pathname === "/continue")
      // Sends the reader on to the URL a parameter names (a javascript: URL runs in the page).
      html(
        shell(`const next = new URLSearchParams(location.search).get("to"); if (next) location.href = next;`),
      );
    else if (url.pathname === "/preview")
      // The parameter is parsed as HTML in an element never put in the document (a sanitiser's first step,
      // done wrong): nothing of it shows in the page, yet its handlers run.
      html(
        shell(
          `const draft = document.createElement("div"); draft.innerHTML = new URLSearchParams(location.search).get("text") || ""; document.getElementById("out").textContent = draft.children.length + " element(s)";`,
        ),
      );
    else if (url.pathname === "/static")
      html(shell(`document.getElementById("out").textContent = "Opened at " + new Date().getFullYear();`));
    else if (url.pathname === "/safe")
      html(
        shell(
          `document.getElementById("out").textContent = "Results for " + new URLSearchParams(location.search).get("q");`,
        ),
      );
    else if (url.pathname === "/reflect") html(shell("", `<p>${url.searchParams.get("q") ?? ""}</p>`));
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const page = (path: string, links: string[] = [], forms: Page["forms"] = []): Page => ({
  path,
  status: 200,
  links,
  forms,
  roles: ["anonymous"],
});

/** probe_dom_xss over a site whose map holds `pages`; the run's browser is closed afterwards. */
async function probeSite(pages: Page[], options: { max_pages?: number } = {}) {
  const profile = profileFor({
    name: "site",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
  });
  const map = systemMapFor({
    target: "site",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "s", version: "1" }, paths: {} },
    pages,
  });
  const context = probeContext({ profile, map, agent: "BROWSER" });
  try {
    const outcome = await probeDomXss(context, options);
    if (typeof outcome === "string") throw new Error(outcome);
    return outcome;
  } finally {
    await closeRunServices(context);
  }
}

describe("probe_dom_xss", () => {
  it("finds script writing a parameter or the fragment into HTML or a link, not text nor a server echo", async () => {
    const outcome = await probeSite([
      page("/search", ["/search?q=tea"]),
      page("/welcome"),
      page("/tabs"),
      page("/run"),
      page("/continue", ["/continue?to=/home"]),
      page("/back", ["/back?next=/home"]),
      page("/safe", ["/safe?q=tea"]),
      page("/prices", [], [{ action: "/prices", method: "GET", fields: ["currency"] }]),
      page("/reflect", ["/reflect?q=tea"]),
    ]);
    const found = outcome.candidates.map((draft) => `${draft.location.value} ${draft.dedupe?.discriminator}`);
    expect(found.sort()).toEqual([
      "/back ?next",
      "/continue ?to",
      "/prices ?currency",
      "/run #fragment",
      "/search ?q",
      "/tabs #fragment",
      "/welcome #fragment",
    ]);
    expect(outcome.candidates[0]).toMatchObject({ domain: "security", defect_class: "xss" });
  }, 120_000);

  it("loads a page with payloads only when an inert word in its input reached a sink or the document", async () => {
    const outcome = await probeSite([
      page("/static", ["/static?q=tea"]),
      page("/preview", ["/preview?text=hi"]),
    ]);
    // /static reads neither input: one load each; /preview's parameter reaches a detached element's HTML.
    expect(
      outcome.candidates.map((draft) => `${draft.location.value} ${draft.dedupe?.discriminator}`),
    ).toEqual(["/preview ?text"]);
    expect(outcome.stats).toMatchObject({ canaries: 4, attempts: 1 });
  }, 60_000);

  it("tries pages that load scripts of their own first, when the bound reaches only some pages", async () => {
    // A server-rendered page with a parameter, listed first, and a page whose script reads the fragment.
    const outcome = await probeSite(
      [page("/reflect", ["/reflect?q=tea"]), { ...page("/welcome"), scripts: ["/welcome.js"] }],
      { max_pages: 1 },
    );
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["/welcome"]);
  }, 60_000);
});
