import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

// Serves the storefront fixture (frontend-spa/): a page loading the minified bundle (whose source map is
// served or not), a page loading the plain bundle, and the JSON API the bundle calls on load.

export interface SpaServer {
  baseUrl: string;
  /** Every request as `METHOD /path?query`, with the cookie and authorization it carried. */
  requests: Array<{ line: string; cookie?: string; authorization?: string }>;
  /** Whether the source map is served (true) or answers 404. */
  serveMap: boolean;
  close(): Promise<void>;
}

const FIXTURE = path.join(import.meta.dirname, "frontend-spa");

const page = (script: string, inline = ""): string =>
  `<!doctype html><html><head><title>Storefront</title><script src="${script}" defer></script></head>
  <body><div id="app">Loading</div>${inline}</body></html>`;

export async function startSpaServer(): Promise<SpaServer> {
  const requests: SpaServer["requests"] = [];
  const state = { serveMap: true };
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://spa.local");
    requests.push({
      line: `${request.method} ${url.pathname}${url.search}`,
      cookie: request.headers.cookie,
      authorization: request.headers.authorization,
    });
    const json = (body: unknown): void => {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    const file = (name: string, type: string): void => {
      response.writeHead(200, { "content-type": type }).end(fs.readFileSync(path.join(FIXTURE, name)));
    };
    switch (url.pathname) {
      case "/":
        response.writeHead(200, { "content-type": "text/html" }).end(page("/static/app.min.js"));
        return;
      case "/plain":
        response
          .writeHead(200, { "content-type": "text/html" })
          .end(page("static/app.js", `<script>fetch("/api/inline/ping", { method: "DELETE" });</script>`));
        return;
      case "/about":
        response.writeHead(200, { "content-type": "text/html" }).end("<title>About</title><p>About us</p>");
        return;
      case "/static/app.min.js":
        return file("app.min.js", "application/javascript");
      case "/static/app.js":
        return file("app.js", "text/javascript");
      case "/static/app.min.js.map":
        if (!state.serveMap) {
          response.writeHead(404).end();
          return;
        }
        return file("app.min.js.map", "application/json");
      case "/api/products":
        return json([{ id: 1, name: "Tea" }]);
      case "/api/session":
        return json({ signedIn: Boolean(request.headers.cookie?.includes("sid=")) });
      case "/api/basket":
        return json({ items: [] });
      case "/api/analytics/view":
        return json({ ok: true });
      default:
        response.writeHead(404, { "content-type": "text/html" }).end("<title>Not found</title>");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    get serveMap() {
      return state.serveMap;
    },
    set serveMap(value: boolean) {
      state.serveMap = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
