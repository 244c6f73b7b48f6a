import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crawlPages } from "../../src/probes/pages/crawl-pages.ts";

const site: Record<string, string> = {
  "/": `<!doctype html><html><head><title> Home
    page </title></head><body>
    <a href="/about">About</a> <a href="about#team">Team</a>
    <a href="/missing">Broken</a> <a href="https://elsewhere.example/x">Elsewhere</a>
    <a href="/account/logout">Sign out</a> <a href="/static/app.css">css</a> <a href="mailto:a@b.c">mail</a>
    <a href="/search?q=next">Search</a>
    <form action="/search" method="get"><input name="q"><button name="go">Go</button></form>
    <form action="/comments" method="post"><textarea name="body"></textarea><input name="body"><select name="topic"></select></form>
    <script src="/static/app.js"></script><script src="https://cdn.example/lib.js"></script>
    <script>fetch("/api/ping")</script><script type="application/ld+json">{"@type":"Thing"}</script>
  </body></html>`,
  "/about": `<html><head><title>About</title></head><body><a href="/">Home</a><a href="/old">Old</a></body></html>`,
  "/search": `<html><head><title>Search</title></head><body><a href="/search?q=next">More</a></body></html>`,
  "/search?q=next": `<html><head><title>Search 2</title></head><body></body></html>`,
};

let server: http.Server;
let baseUrl: string;
const requested: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = request.url ?? "/";
    requested.push(url);
    if (url === "/old") {
      response.writeHead(301, { location: "/about" }).end();
      return;
    }
    const body = site[url];
    if (body === undefined) {
      response.writeHead(404, { "content-type": "text/html" }).end("<title>Not found</title>");
      return;
    }
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("crawlPages", () => {
  it("walks same-origin links breadth first, recording status, title, links and forms", async () => {
    requested.length = 0;
    const pages = await crawlPages(baseUrl, "/");
    const anonymous = ["anonymous"];
    expect(pages).toEqual([
      {
        path: "/",
        status: 200,
        title: "Home page",
        html: true,
        links: ["/about", "/missing", "/account/logout", "/static/app.css", "/search?q=next"],
        forms: [
          {
            action: "/search",
            method: "GET",
            enctype: "application/x-www-form-urlencoded",
            // The default button is named: a browser sends `go=` with the query.
            fields: ["q", "go"],
            inputs: [
              { name: "q", type: "text", required: false },
              { name: "go", type: "submit", required: false, value: "" },
            ],
          },
          {
            action: "/comments",
            method: "POST",
            enctype: "application/x-www-form-urlencoded",
            fields: ["body", "topic"],
            inputs: [
              { name: "body", type: "textarea", required: false },
              { name: "topic", type: "select", required: false },
            ],
          },
        ],
        roles: anonymous,
        scripts: ["/static/app.js"],
        inline_scripts: [`fetch("/api/ping")`],
      },
      {
        path: "/about",
        status: 200,
        title: "About",
        html: true,
        links: ["/", "/old"],
        forms: [],
        roles: anonymous,
      },
      {
        path: "/missing",
        status: 404,
        title: "Not found",
        html: true,
        links: [],
        forms: [],
        roles: anonymous,
      },
      {
        path: "/search?q=next",
        status: 200,
        title: "Search 2",
        html: true,
        links: [],
        forms: [],
        roles: anonymous,
      },
      { path: "/old", status: 301, links: ["/about"], forms: [], roles: anonymous },
    ]);
    // Never signs out, never fetches assets, never leaves the origin, never submits a form (not even GET).
    expect(requested).not.toContain("/account/logout");
    expect(requested).not.toContain("/static/app.css");
    expect(requested).not.toContain("/comments");
    expect(requested).not.toContain("/search");
    expect(requested).not.toContain("/x");
  });

  it("stops at maxPages", async () => {
    const pages = await crawlPages(baseUrl, "/", { maxPages: 2 });
    expect(pages.map((page) => page.path)).toEqual(["/", "/about"]);
  });

  it("spends the page allowance on HTML pages, not on the JSON answers links lead to", async () => {
    const api = http.createServer((request, response) => {
      if (request.url === "/") {
        const links = [..."abcdef"]
          .map((name) => `/api/${name}`)
          .concat("/overview")
          .map((href) => `<a href="${href}">x</a>`);
        response.writeHead(200, { "content-type": "text/html" }).end(`<title>Index</title>${links.join("")}`);
      } else if (request.url === "/overview") {
        response.writeHead(200, { "content-type": "text/html" }).end("<title>Overview</title>");
      } else {
        response.writeHead(200, { "content-type": "application/json" }).end("[]");
      }
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const root = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      const pages = await crawlPages(root, "/", { maxPages: 3 });
      expect(pages.map((page) => page.path).at(-1)).toBe("/overview");
      expect(pages).toHaveLength(8);
      // Every answer still counts toward a ceiling (three per page allowed), so a link-heavy index ends.
      const tight = await crawlPages(root, "/", { maxPages: 2 });
      expect(tight.map((page) => page.path)).toEqual(["/", "/api/a", "/api/b", "/api/c", "/api/d", "/api/e"]);
    } finally {
      api.close();
    }
  });
});
