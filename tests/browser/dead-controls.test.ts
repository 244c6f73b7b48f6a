import http from "node:http";
import type { AddressInfo } from "node:net";
import type { BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrowserSession } from "../../src/probes/browser/browser-session.ts";
import { clickAndWatch, clickableControls } from "../../src/probes/browser/dead-controls.ts";
import { checkPage } from "../../src/probes/browser/page-checks.ts";
import { closePage, loadPage } from "../../src/probes/browser/page-load.ts";

// Dead controls in the forms real pages give them: a `javascript:void(0)` link, a styled div with the
// pointer cursor (component libraries), an element with an inline handler, and a dead button after a
// table's worth of working row buttons. Each has a look-alike that acts; only the dead ones are answered,
// and only when a fresh load's click does nothing again. A confirmation a busy machine cut short (a failed
// load, a click that could not happen) is tried again rather than taken as judged.

const page = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<style>.chip { cursor: pointer; display: inline-block; padding: 4px; } .chip span { cursor: pointer; }</style></head>
<body><main><h1>${title}</h1>${body}</main></body></html>`;

const PAGES: Record<string, string> = {
  "/dead": page(
    "Report",
    `<p><a href="javascript:void(0)" id="share">Share report</a></p>
     <div class="chip" id="download"><span>Download CSV</span></div>
     <p><span onclick="void 0">Print view</span></p>
     <p id="out"></p>
     <script>document.getElementById("download").addEventListener("click", () => {});</script>`,
  ),
  "/alive": page(
    "Board",
    `<p><a href="javascript:void(0)" id="more">Show more</a></p><p id="extra" hidden>More</p>
     <div class="chip" id="filter"><span>Only open</span></div>
     <p><span onclick="fetch('/api/ping')">Ping</span></p>
     <script>
       document.getElementById("more").addEventListener("click", () => { document.getElementById("extra").hidden = false; });
       document.getElementById("filter").addEventListener("click", (event) => { event.currentTarget.classList.toggle("on"); });
     </script>`,
  ),
  "/rows": page(
    "Rows",
    `<table>${Array.from({ length: 12 }, (_, row) => `<tr><td>Row ${row}</td><td><button type="button" class="edit">Edit</button></td></tr>`).join("")}</table>
     <button type="button" id="export">Export</button><p id="note"></p>
     <script>
       for (const button of document.querySelectorAll(".edit")) button.addEventListener("click", () => { document.getElementById("note").textContent = "Editing"; });
     </script>`,
  ),
  // Served slowly, as on a busy machine: its control answers after 1.2 s, later than an idle page's watch.
  "/slow": page(
    "Slow",
    `<button type="button" id="refresh">Refresh figures</button><p id="figures"></p>
     <script>
       document.getElementById("refresh").addEventListener("click", () => {
         setTimeout(() => { document.getElementById("figures").textContent = "12 open"; }, 1200);
       });
     </script>`,
  ),
  // Acts at once (a request), and changes the page only later: the watch has its answer from the request.
  "/quick": page(
    "Quick",
    `<button type="button" id="sync">Sync now</button><p id="state"></p>
     <script>
       document.getElementById("sync").addEventListener("click", () => {
         fetch("/api/ping");
         setTimeout(() => { document.getElementById("state").textContent = "synced"; }, 800);
       });
     </script>`,
  ),
  // A dead button on a page whose second load fails once, as a busy server's can.
  "/flaky": page("Export", `<button type="button" id="export-all">Export all</button>`),
  // A dead button that a passing overlay covers on the second load only: that click cannot happen.
  "/covered": page("Print", `<button type="button" id="print-all">Print all</button>`),
};
const OVERLAY = '<div style="position:fixed;inset:0;z-index:10"></div>';
const SLOW_ANSWER_MS = 2500;
let flakyLoads = 0;
let coveredLoads = 0;

let server: http.Server;
let baseUrl: string;
let session: BrowserSession;
let context: BrowserContext;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0] as string;
    const body = PAGES[path];
    if (path === "/flaky" && ++flakyLoads === 2) return void response.writeHead(503).end();
    const covered = path === "/covered" && ++coveredLoads === 2;
    const answer = () =>
      response
        .writeHead(200, { "content-type": "text/html" })
        .end(covered ? body?.replace("</main>", `</main>${OVERLAY}`) : body);
    if (body) return void setTimeout(answer, path === "/slow" ? SLOW_ANSWER_MS : 0);
    response.writeHead(request.url === "/api/ping" ? 204 : 404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  session = new BrowserSession();
  context = await session.context({ role: "anonymous", headers: async () => ({}) }, baseUrl);
}, 60_000);

afterAll(async () => {
  await session.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function deadOn(path: string): Promise<string[]> {
  return (await controlsOn(path)).deadControls.map(({ control }) => control.name).sort();
}

function controlsOn(path: string, controlsUntil?: number, judgedControls = new Set<string>()) {
  return checkPage(session, context, {
    url: `${baseUrl}${path}`,
    checks: new Set(["controls"]),
    load: { writesAllowed: false },
    workingControls: new Set(),
    judgedControls,
    template: path,
    maxControls: 8,
    ...(controlsUntil === undefined ? {} : { controlsUntil }),
  });
}

describe("dead controls", () => {
  it("finds a dead javascript: link, a dead pointer-styled div and a dead inline handler", async () => {
    expect(await deadOn("/dead")).toEqual(["Download CSV", "Print view", "Share report"]);
  }, 90_000);

  it("leaves alone look-alikes that show something, change a class or send a request", async () => {
    expect(await deadOn("/alive")).toEqual([]);
  }, 90_000);

  it("clicks one of many same-named row buttons, so a dead control after them is still reached", async () => {
    expect(await deadOn("/rows")).toEqual(["Export"]);
  }, 90_000);

  it("watches a click longer on a page that loaded slowly, so a late answer is not taken for none", async () => {
    expect(await deadOn("/slow")).toEqual([]);
  }, 90_000);

  it("judges an inert control again on the next visit when its confirming load failed", async () => {
    const judged = new Set<string>();
    const first = await controlsOn("/flaky", undefined, judged);
    expect(first.deadControls).toEqual([]);
    expect(first.unconfirmed).toEqual(["Export all: the confirming load failed, left for another visit"]);
    const next = await controlsOn("/flaky", undefined, judged);
    expect(next.deadControls.map(({ control }) => control.name)).toEqual(["Export all"]);
  }, 90_000);

  it("tries a confirming click that could not happen once more on a fresh load", async () => {
    const result = await controlsOn("/covered");
    expect(result.deadControls.map(({ control }) => control.name)).toEqual(["Print all"]);
    expect(result.unconfirmed).toEqual([]);
  }, 90_000);

  it("leaves a page's controls unclicked, and counted, once the page's share of the time is spent", async () => {
    const result = await controlsOn("/dead", Date.now() - 1);
    expect(result.deadControls).toEqual([]);
    expect(result.unclicked).toBe(3);
  }, 90_000);

  it("records each load in the session's pace, so slow pages stretch the passes' time bounds", async () => {
    // An idle machine, whatever this one's load: the stretch read here comes from the loads alone.
    const own = new BrowserSession({ machineLoad: () => 0 });
    try {
      const anonymous = await own.context({ role: "anonymous", headers: async () => ({}) }, baseUrl);
      expect(own.pace.stretch()).toBe(1);
      for (let index = 0; index < 2; index += 1)
        await closePage(session, await loadPage(own, anonymous, `${baseUrl}/slow`, { writesAllowed: false }));
      expect(own.pace.stretch()).toBeGreaterThan(1);
    } finally {
      await own.close();
    }
  }, 90_000);

  it("stops watching a click at its first effect instead of waiting out the watch", async () => {
    const loaded = await loadPage(session, context, `${baseUrl}/quick`, { writesAllowed: false });
    try {
      const [control] = await clickableControls(loaded.page);
      expect(control?.name).toBe("Sync now");
      const outcome = await clickAndWatch(loaded, control as NonNullable<typeof control>);
      // The DOM change 800 ms later is never waited for: the request already proved the control works.
      expect(outcome.effects).toEqual(["1 request(s)"]);
    } finally {
      await closePage(session, loaded);
    }
  }, 90_000);
});
