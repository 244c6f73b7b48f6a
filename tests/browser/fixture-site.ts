import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";

// A small site with, for every browser check, a page that has the defect and a look-alike that does not:
// the checks must find the first and stay silent on the second. `fixed` switches the defects off so a
// generated test can be seen failing, then passing. Every request is counted by method and path.

export interface FixtureSite {
  baseUrl: string;
  hits: Map<string, number>;
  setFixed(fixed: boolean): void;
  close(): Promise<void>;
}

// A 1×1 transparent PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

function html(title: string, body: string, head = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title>${head}</head><body><main><h1>${title}</h1>${body}</main></body></html>`;
}

/** The session cookie value of the fixture's one member. */
export const MEMBER_TOKEN = "tok-member-123";

export const PAGES = [
  "/console-bad",
  "/console-ok",
  "/console-flaky",
  "/links-bad",
  "/links-ok",
  "/a11y-bad",
  "/a11y-ok",
  "/controls-bad",
  "/controls-ok",
  "/wide-bad",
  "/wide-ok",
  "/bg-bad",
  "/bg-ok",
  "/about",
] as const;

export async function startFixtureSite(): Promise<FixtureSite> {
  const hits = new Map<string, number>();
  let fixed = false;
  const pages: Record<string, () => string> = {
    "/console-bad": () =>
      html(
        "Dashboard",
        "<p>Numbers</p>",
        fixed
          ? ""
          : `<script>console.error("Widget " + Math.floor(Math.random() * 100000) + " failed to render");</script>
             <script>window.addEventListener("load", () => { const settings = undefined; settings.theme; });</script>`,
      ),
    "/console-ok": () =>
      html(
        "Reports",
        "<p>All fine</p>",
        `<script>console.warn("this API is deprecated"); try { null.x; } catch (error) { console.log("handled", error.message); }</script>`,
      ),
    // An error on the very first load only (a cold cache, a race): one load is not enough to call it a defect.
    "/console-flaky": () =>
      html(
        "Inbox",
        "<p>Mail</p>",
        (hits.get("GET /console-flaky") ?? 0) <= 1
          ? `<script>console.error("cold start: cache miss");</script>`
          : "",
      ),
    "/links-bad": () =>
      html(
        "Archive",
        `<a href="${fixed ? "/about" : "/gone-report"}">Old report</a> <a href="/logout">Log out</a>
         <a href="/sometimes">Status</a> <img alt="logo" src="${fixed ? "/img/ok.png" : "/img/missing.png"}">
         ${fixed ? "" : '<script src="/js/missing.js"></script>'}`,
      ),
    "/links-ok": () =>
      html(
        "Help",
        `<a href="/about">About us</a> <a href="/about?ref=help#team">Team</a> <img alt="logo" src="/img/ok.png">`,
      ),
    "/a11y-bad": () => html("Search", `<div><input type="text"></div>`),
    "/a11y-ok": () =>
      html(
        "Find",
        `<div><label for="q">Search</label> <input id="q" type="text" placeholder="Search"></div>`,
      ),
    "/controls-bad": () =>
      html(
        "Editor",
        `<button id="save-draft" type="button">Save draft</button>
         <button type="button">Delete project</button>
         <form action="/editor" method="post"><button type="button">Preview</button></form>`,
      ),
    "/controls-ok": () =>
      html(
        "Settings",
        `<button type="button" id="toggle">Show details</button><div id="panel" hidden>Details</div>
         <button type="button" id="ping">Check connection</button>
         <button type="button" id="refresh">Refresh</button>
         <a href="#" id="copy">Copy link</a>
         <button type="button" id="upload">Upload a picture</button><input type="file" id="file" hidden>
         <style>.menu ul { display: none; } .menu:focus-within ul { display: block; }</style>
         <div class="menu"><button type="button">More</button><ul><li>Help</li><li>About</li></ul></div>
         <script>
           document.getElementById("toggle").addEventListener("click", () => { const p = document.getElementById("panel"); p.hidden = !p.hidden; });
           document.getElementById("ping").addEventListener("click", () => { fetch("/api/ping"); });
           document.getElementById("refresh").addEventListener("click", () => { fetch("/api/refresh", { method: "POST" }).catch(() => {}); });
           document.getElementById("upload").addEventListener("click", () => document.getElementById("file").click());
           document.getElementById("copy").addEventListener("click", (event) => { event.preventDefault(); localStorage.setItem("copied", location.href); });
         </script>`,
      ),
    "/wide-bad": () =>
      html(
        "Gallery",
        `<div class="banner" style="width: 900px; height: 40px; background: #eee">Banner</div>`,
      ),
    "/wide-ok": () =>
      html(
        "Table",
        `<div style="overflow-x: auto; max-width: 100%"><table style="width: 900px"><tr><td>wide but scrolls inside its box</td></tr></table></div>
         <img alt="photo" src="/img/ok.png" style="max-width: 100%">`,
      ),
    "/bg-bad": () =>
      html(
        "Orders",
        `<ul id="list"></ul>`,
        `<script>fetch("/api/orders").then((r) => r.ok ? r.json() : null).catch(() => {});</script>`,
      ),
    "/bg-ok": () =>
      html(
        "Customers",
        `<ul id="list"></ul>`,
        `<script>fetch("/api/ping").then((r) => r.json()).catch(() => {});</script>`,
      ),
    "/about": () => html("About", "<p>About us</p>"),
  };
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://fixture");
    const key = `${request.method} ${url.pathname}`;
    hits.set(key, (hits.get(key) ?? 0) + 1);
    // A members' page: only with the member's session cookie (or bearer token); its script fails for signed-in people only.
    if (url.pathname === "/members") {
      const signedIn =
        (request.headers.cookie ?? "").split(/;\s*/).includes(`sid=${MEMBER_TOKEN}`) ||
        request.headers.authorization === `Bearer ${MEMBER_TOKEN}`;
      response.writeHead(signedIn ? 200 : 403, { "content-type": "text/html; charset=utf-8" });
      response.end(
        signedIn
          ? html(
              "Members",
              "<p>Welcome</p>",
              `<script>window.addEventListener("load", () => { null.profile; });</script>`,
            )
          : html("Forbidden", "<p>Sign in</p>"),
      );
      return;
    }
    if (url.pathname === "/moved") {
      response.writeHead(302, { location: "/about" });
      response.end();
      return;
    }
    const page = pages[url.pathname];
    if (page && request.method === "GET") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(page());
      return;
    }
    if (url.pathname === "/img/ok.png") {
      response.writeHead(200, { "content-type": "image/png" });
      response.end(PNG);
      return;
    }
    if (url.pathname === "/api/ping") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"ok":true}');
      return;
    }
    if (url.pathname === "/api/orders" && !fixed) {
      response.writeHead(500, { "content-type": "application/json" });
      response.end('{"error":"boom"}');
      return;
    }
    // Fails the first time only: a link is broken when a second request agrees.
    if (url.pathname === "/sometimes") {
      const failing = (hits.get(key) ?? 0) === 1;
      response.writeHead(failing ? 503 : 200, { "content-type": "text/html" });
      response.end(html("Status", "<p>up</p>"));
      return;
    }
    // An API-style 404 (JSON): the browser aborts a script answered so, after the status came in.
    if (url.pathname.startsWith("/js/")) {
      response.writeHead(404, { "content-type": "application/json", "x-content-type-options": "nosniff" });
      response.end('{"error":"not found"}');
      return;
    }
    response.writeHead(404, { "content-type": "text/plain" });
    response.end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    hits,
    setFixed: (value) => {
      fixed = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A BROWSER agent's run context on an external site of plain pages, each mapped as reached by anonymous
 * visitors; `allowWrites` for checks that submit forms.
 */
export function anonymousPagesContext(
  name: string,
  baseUrl: string,
  paths: readonly string[],
  options: { allowWrites?: boolean } = {},
): FakeRunContext {
  const map = systemMapFor({
    target: name,
    baseUrl,
    document: { openapi: "3.0.0", paths: {} },
    pages: paths.map((path) => ({ path, status: 200, links: [], forms: [], roles: ["anonymous"] })),
  });
  const profile = profileFor({
    name,
    source: {},
    environment: {
      mode: "external",
      base_url: baseUrl,
      ...(options.allowWrites ? { allow_writes: true } : {}),
    },
  });
  return probeContext({ profile, map, agent: "BROWSER" });
}

/**
 * Copies a draft's generated browser test under node_modules (named `<prefix>-<file>`), so it resolves
 * playwright-core and axe as it would inside a project; answers the copy's path.
 */
export function generatedBrowserTest(
  context: FakeRunContext,
  draft: EnvelopeDraft | undefined,
  prefix: string,
): string {
  const uri = draft?.evidence.find((item) => item.kind === "failing_test")?.uri;
  if (!uri) throw new Error("no generated test");
  const name = uri.replace(/^artifact:\/\/[^/]+\//, "");
  const folder = path.join(process.cwd(), "node_modules", ".cache", "qaas-browser-tests");
  fs.mkdirSync(folder, { recursive: true });
  const file = path.join(folder, `${prefix}-${path.basename(name)}`);
  fs.copyFileSync(path.join(context.artifactsDir, name), file);
  return file;
}
