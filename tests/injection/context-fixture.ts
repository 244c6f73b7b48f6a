import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { listenOnLoopback } from "./injection-fixture.ts";

// A second small service for the injection probes, for contexts the first one lacks: a download that only
// checks the name starts with its documents folder (without resolving `..` first), and a blind shell sink
// whose output never comes back, behind a server that takes 200 ms for every answer (a loaded machine), and
// a page include as PHP does it (`include($_GET["page"])`): a `.php` file runs, so its output comes back
// and not its lines, under an input named for nothing but whose link value names a file. The safe build
// resolves the name before checking it, never runs a shell, and includes only its own pages.

export interface ContextServer {
  baseUrl: string;
  document: Record<string, unknown>;
  root: string;
  close(): Promise<void>;
}

const SOURCE = `// the context fixture's own entry point, shipped beside the documents it serves
export const downloadsDescription = "downloads are read from the files folder of this application";
export const labelsDescription = "labels are printed by a helper the server runs for each request";
`;

const GUIDE = `Guide to the documents of the context fixture application
Every document in this folder may be downloaded by any visitor
`;

/** The page include's entry point: including it runs it, so its lines never show. */
const PHP_ENTRY = `<?php
// the context fixture's page controller: every page of the site goes through here
$requested_page_name = $_GET['page'];
include('pages/' . $requested_page_name);
`;

const ANSWER_DELAY_MS = 200;

const document = {
  openapi: "3.0.3",
  info: { title: "context fixture", version: "1" },
  paths: {
    "/api/downloads": {
      get: {
        parameters: [{ name: "file", in: "query", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "the file" }, "404": { description: "no such file" } },
      },
    },
    "/index.php": {
      get: {
        parameters: [
          { name: "page", in: "query", required: true, schema: { type: "string" }, example: "intro.php" },
        ],
        responses: { "200": { description: "the page" } },
      },
    },
    "/api/labels": {
      get: {
        parameters: [{ name: "title", in: "query", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "printed" } },
      },
    },
  },
};

function json(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

export async function startContextServer(options: { vulnerable: boolean }): Promise<ContextServer> {
  const { vulnerable } = options;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-context-app-"));
  const files = path.join(root, "files");
  fs.mkdirSync(path.join(files, "docs"), { recursive: true });
  fs.writeFileSync(path.join(root, "server.js"), SOURCE);
  fs.writeFileSync(path.join(files, "docs", "guide.txt"), GUIDE);
  fs.writeFileSync(path.join(root, "index.php"), PHP_ENTRY);
  fs.mkdirSync(path.join(root, "pages"));
  fs.writeFileSync(path.join(root, "pages", "intro.php"), "<?php echo '<p>Welcome</p>';\n");
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://fixture");
    const route = `${request.method} ${url.pathname}`;
    setTimeout(() => {
      if (route === "GET /openapi.json") return json(response, 200, document);
      if (route === "GET /api/downloads") {
        const name = url.searchParams.get("file") ?? "";
        const wanted = path.join(files, name);
        // The vulnerable build checks the name as given; the safe one the path it resolves to.
        const allowed = vulnerable
          ? name.startsWith("docs/")
          : path.resolve(wanted).startsWith(path.join(files, "docs") + path.sep);
        if (!allowed || !fs.existsSync(wanted) || !fs.statSync(wanted).isFile())
          return json(response, 404, { error: "no such file" });
        response.writeHead(200, { "content-type": "text/plain" });
        return response.end(fs.readFileSync(wanted));
      }
      if (route === "GET /index.php") {
        const name = url.searchParams.get("page") ?? "";
        const wanted = path.join(root, "pages", name);
        const allowed = vulnerable || path.dirname(path.resolve(wanted)) === path.join(root, "pages");
        if (!allowed || !fs.existsSync(wanted) || !fs.statSync(wanted).isFile()) {
          response.writeHead(200, { "content-type": "text/html" });
          return response.end("<html><body><p>Warning: include failed</p></body></html>");
        }
        // A PHP file runs: what it prints comes back, never its source.
        const included = /\.php$/.test(name) ? "<p>rendered</p>" : fs.readFileSync(wanted, "utf8");
        response.writeHead(200, { "content-type": "text/html" });
        return response.end(`<html><body>${included}</body></html>`);
      }
      if (route === "GET /api/labels") {
        const title = url.searchParams.get("title") ?? "";
        if (!vulnerable) return json(response, 200, { printed: true });
        // Blind: the helper's output is discarded, only its exit is awaited.
        execFile("sh", ["-c", `printf '%s' "${title}" > /dev/null`], { timeout: 3000 }, () =>
          json(response, 200, { printed: true }),
        );
        return;
      }
      json(response, 404, { error: "not found" });
    }, ANSWER_DELAY_MS);
  });
  const { baseUrl, close } = await listenOnLoopback(server, root);
  return {
    baseUrl,
    document,
    root,
    close,
  };
}
