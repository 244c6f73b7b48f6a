import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { look } from "../../src/probes/auditor/xss-rendered-look.ts";
import { BrowserSession } from "../../src/probes/browser/browser-session.ts";

// The stored-XSS look's bounds. A page whose script never yields once it has loaded: its renderer answers no
// DOM read and no close, and the look gives up on it after its bound instead of holding AUDITOR, and the run,
// for good. A page whose one records call a busy target answers late, or whose assets hold `load` (where its
// script fetches the records) past the navigation bound: the look waits for them.

let server: http.Server;
let baseUrl: string;
let session: BrowserSession;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    if (request.url === "/api/notes") {
      // Later than the look's quiet bound (3 s), as a loaded target answers its heaviest read.
      setTimeout(() => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify([{ text: "<qaas-late1></qaas-late1>hello" }]));
      }, 4500);
      return;
    }
    if (request.url === "/slow.png") {
      // Past the look's navigation bound (10 s): the page's `load` comes late.
      setTimeout(() => response.writeHead(200, { "content-type": "image/png" }).end(), 10_500);
      return;
    }
    if (request.url === "/api/pins") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify([{ text: "<qaas-late2></qaas-late2>pinned" }]));
      return;
    }
    if (request.url === "/pins") {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(
        `<!doctype html><html lang="en"><head><title>Pins</title></head><body><ul id="pins"></ul>
         <img src="/slow.png" alt="">
         <script>window.addEventListener("load", () => fetch("/api/pins").then((r) => r.json()).then((pins) => {
           for (const pin of pins) document.getElementById("pins").innerHTML += "<li>" + pin.text + "</li>";
         }));</script></body></html>`,
      );
      return;
    }
    if (request.url === "/notes") {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(
        `<!doctype html><html lang="en"><head><title>Notes</title></head><body><ul id="notes"></ul>
         <script>fetch("/api/notes").then((r) => r.json()).then((notes) => {
           for (const note of notes) document.getElementById("notes").innerHTML += "<li>" + note.text + "</li>";
         });</script></body></html>`,
      );
      return;
    }
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

/** One look at `path` for `marker`, as an anonymous reader. */
async function lookAt(path: string, marker: string) {
  const context = await session.context({ role: "anonymous", headers: async () => ({}) }, baseUrl);
  return look(session, context, `${baseUrl}${path}`, [marker], undefined);
}

describe("a look at a page whose renderer is stuck", () => {
  it("answers nothing shown once its bound passed, rather than waiting for the renderer", async () => {
    const seen = await lookAt("/board", "<qaas-x1>");
    expect([...seen.shown.keys()]).toEqual([]);
  }, 40_000);
});

describe("a look at a page whose records call answers late", () => {
  it("waits for the call still open and sees the marker it brought", async () => {
    const seen = await lookAt("/notes", "<qaas-late1>");
    expect([...seen.shown.keys()]).toEqual(["<qaas-late1>"]);
    expect(seen.unsettled).toBe(false);
  }, 40_000);
});

describe("a look at a page whose load comes after the navigation bound", () => {
  it("waits for load, then for the records its script fetches on load", async () => {
    const seen = await lookAt("/pins", "<qaas-late2>");
    expect([...seen.shown.keys()]).toEqual(["<qaas-late2>"]);
  }, 60_000);
});
