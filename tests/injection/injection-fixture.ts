import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

// A small service for the injection probes' tests (node:http, no framework), in two builds from one
// source: `vulnerable` passes input to a shell, a template engine, the file system, an HTTP client, an
// entity-resolving XML reader and an operator-aware filter; the safe build takes the same input as data.
// Both serve the same document, so each probe must tell the two apart by behaviour alone.

export interface InjectionServer {
  baseUrl: string;
  document: Record<string, unknown>;
  /** The application's folder: its sources and the documents it serves. */
  root: string;
  /** Names an upload was asked to write outside the documents folder. */
  escapedWrites: string[];
  close(): Promise<void>;
}

const USERS = [
  { username: "ada", password: "ada-secret" },
  { username: "bob", password: "bob-secret" },
];

const SOURCE = `// the fixture application's own entry point, shipped beside the documents it serves
export const documentsFolderDescription = "documents are read from the docs folder of this application";
export const greetingTemplateDescription = "greetings are rendered from the visitor's name and the clock";
`;

// Quoted words: a line read into a JSON answer arrives with its quotes escaped, as real files do.
const README = `Welcome to the documents folder of the fixture application
Every document here is "plain text" and safe to show to any visitor of the "documents" page
`;

function json(response: http.ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return void response.end();
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

async function readBody(request: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function shell(command: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 5000 }, (_error, stdout) => resolve(String(stdout)));
  });
}

/** A tiny template engine: `{{ a*b }}` is evaluated, the rest copied. */
function render(template: string): string {
  return template.replace(/\{\{\s*(\d+)\s*\*\s*(\d+)\s*\}\}/g, (_whole, left: string, right: string) =>
    String(Number(left) * Number(right)),
  );
}

/** An XML reader that, when `resolve` is set, expands external entities (`file://` and `http://`). */
async function readXml(document: string, resolve: boolean): Promise<string> {
  const entities = new Map<string, string>();
  if (resolve) {
    for (const match of document.matchAll(/<!ENTITY\s+(%\s+)?(\w+)\s+SYSTEM\s+"([^"]+)"\s*>/g)) {
      const system = match[3]!;
      let value = "";
      try {
        if (system.startsWith("file://")) value = fs.readFileSync(system.slice(7), "utf8");
        else value = await (await fetch(system)).text();
      } catch {
        value = "";
      }
      entities.set(match[2]!, value);
    }
  }
  const name = /<name>([\s\S]*?)<\/name>/.exec(document)?.[1] ?? "";
  return name.replace(/&(\w+);/g, (whole, entity: string) => entities.get(entity) ?? whole);
}

/** Whether `value` matches `filter` the way a document store's equality filter does (operators too). */
function matches(value: string, filter: unknown, operators: boolean): boolean {
  if (typeof filter === "string") return value === filter;
  if (!operators || !filter || typeof filter !== "object") return false;
  const [operator, operand] = Object.entries(filter as Record<string, unknown>)[0] ?? [];
  if (operator === "$ne") return value !== operand;
  if (operator === "$gt") return typeof operand === "string" && value > operand;
  if (operator === "$eq") return value === operand;
  if (operator === "$in") return Array.isArray(operand) && operand.includes(value);
  return false;
}

const document = {
  openapi: "3.0.3",
  info: { title: "injection fixture", version: "1.0.0" },
  paths: {
    "/api/lookup": {
      get: {
        operationId: "lookupHost",
        parameters: [{ name: "host", in: "query", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "the lookup's output" } },
      },
    },
    "/api/greeting": {
      get: {
        operationId: "greet",
        parameters: [{ name: "name", in: "query", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "a greeting" } },
      },
    },
    "/api/documents/read": {
      get: {
        operationId: "readDocument",
        parameters: [{ name: "file", in: "query", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "the document" }, "404": { description: "no such document" } },
      },
    },
    "/api/documents/upload": {
      post: {
        operationId: "uploadDocument",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["file", "content"],
                properties: { file: { type: "string" }, content: { type: "string" } },
              },
            },
          },
        },
        responses: { "201": { description: "saved, with what the folder now holds under that name" } },
      },
    },
    "/api/mirrors": {
      post: {
        operationId: "mirrorRemote",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["scheme", "host", "port", "path"],
                properties: {
                  scheme: { type: "string" },
                  host: { type: "string" },
                  port: { type: "integer" },
                  path: { type: "string" },
                },
              },
            },
          },
        },
        responses: { "200": { description: "what the mirror answered" } },
      },
    },
    "/api/previews": {
      post: {
        operationId: "previewLink",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["url"],
                properties: { url: { type: "string", format: "uri" } },
              },
            },
          },
        },
        responses: { "200": { description: "the preview" }, "400": { description: "refused" } },
      },
    },
    "/api/import": {
      post: {
        operationId: "importRecord",
        requestBody: {
          required: true,
          content: { "application/xml": { schema: { type: "string" } } },
        },
        responses: { "200": { description: "the imported record" } },
      },
    },
    "/auth/continue": {
      get: {
        operationId: "continueAfterSignIn",
        parameters: [{ name: "next", in: "query", required: true, schema: { type: "string" } }],
        responses: { "302": { description: "on to the next page" } },
      },
    },
    "/api/drafts/restore": {
      post: {
        operationId: "restoreDraft",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: { type: "object", required: ["state"], properties: { state: { type: "string" } } },
            },
          },
        },
        responses: { "200": { description: "the restored draft" }, "400": { description: "unreadable" } },
      },
    },
    "/api/session": {
      post: {
        operationId: "signIn",
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                required: ["username", "password"],
                properties: { username: { type: "string" }, password: { type: "string" } },
              },
            },
          },
        },
        responses: { "200": { description: "signed in" }, "401": { description: "refused" } },
      },
    },
  },
};

export async function startInjectionServer(options: { vulnerable: boolean }): Promise<InjectionServer> {
  const vulnerable = options.vulnerable;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-injection-app-"));
  fs.mkdirSync(path.join(root, "docs"));
  fs.writeFileSync(path.join(root, "server.js"), SOURCE);
  fs.writeFileSync(path.join(root, "docs", "readme.txt"), README);
  const docs = path.join(root, "docs");
  const escapedWrites: string[] = [];
  fs.mkdirSync(path.join(root, "logs"));
  const signInLog = path.join(root, "logs", "app.log");

  const server = http.createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? "/", "http://fixture");
      const route = `${request.method} ${url.pathname}`;
      if (route === "GET /openapi.json") return json(response, 200, document);
      if (route === "GET /api/lookup") {
        const host = url.searchParams.get("host") ?? "";
        const output = vulnerable
          ? await shell("/bin/sh", ["-c", `echo looking up ${host}`])
          : await shell("echo", ["looking up", host]);
        return json(response, 200, { output });
      }
      if (route === "GET /api/greeting") {
        const name = url.searchParams.get("name") ?? "";
        return json(response, 200, { greeting: vulnerable ? render(`Hello ${name}`) : `Hello ${name}` });
      }
      if (route === "GET /api/documents/read") {
        const file = path.join(docs, url.searchParams.get("file") ?? "");
        if (!vulnerable && !file.startsWith(`${docs}${path.sep}`))
          return json(response, 404, { error: "no such document" });
        let content: string;
        try {
          content = fs.readFileSync(file, "utf8");
        } catch {
          return json(response, 404, { error: "no such document" });
        }
        response.writeHead(200, { "content-type": "text/plain" });
        return response.end(content);
      }
      if (route === "POST /api/documents/upload") {
        // Writes wherever the name points; the safe build keeps only the name's last part, inside the
        // documents folder. Answers with the file's content as it now is.
        const body = JSON.parse((await readBody(request)) || "{}") as { file?: unknown; content?: unknown };
        if (typeof body.file !== "string" || typeof body.content !== "string")
          return json(response, 400, { error: "file and content required" });
        const file = path.join(docs, vulnerable ? body.file : path.basename(body.file));
        if (!file.startsWith(`${docs}${path.sep}`)) escapedWrites.push(body.file);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, body.content);
        response.writeHead(201, { "content-type": "text/plain" });
        return response.end(fs.readFileSync(file, "utf8"));
      }
      if (route === "POST /api/previews") {
        const body = JSON.parse((await readBody(request)) || "{}") as { url?: unknown };
        if (typeof body.url !== "string") return json(response, 400, { error: "url required" });
        let target: URL;
        try {
          target = new URL(body.url);
        } catch {
          return json(response, 400, { error: "not a URL" });
        }
        if (!vulnerable && target.hostname !== "preview.example")
          return json(response, 400, { error: "host not allowed" });
        try {
          const fetched = await fetch(target, { signal: AbortSignal.timeout(2000) });
          return json(response, 200, { preview: (await fetched.text()).slice(0, 200) });
        } catch {
          return json(response, 200, { preview: "" });
        }
      }
      if (route === "POST /api/mirrors") {
        // The URL is assembled from its parts, as import-from-a-server forms do.
        const body = JSON.parse((await readBody(request)) || "{}") as Record<string, unknown>;
        // Strict about types, as a schema-validating server is: "8080" is not an integer.
        if (typeof body.port !== "number") return json(response, 400, { error: "port must be an integer" });
        if (!vulnerable && body.host !== "mirror.example")
          return json(response, 400, { error: "host not allowed" });
        try {
          const fetched = await fetch(
            `${String(body.scheme)}://${String(body.host)}:${Number(body.port)}${String(body.path)}`,
            {
              signal: AbortSignal.timeout(2000),
            },
          );
          return json(response, 200, { mirrored: (await fetched.text()).length });
        } catch {
          return json(response, 200, { mirrored: 0 });
        }
      }
      if (route === "POST /api/import") {
        const xml = await readBody(request);
        // JSON, as import endpoints answer: a file read through an entity arrives escaped inside a string.
        response.writeHead(200, { "content-type": "application/json" });
        return response.end(JSON.stringify({ imported: await readXml(xml, vulnerable) }));
      }
      if (route === "GET /auth/continue") {
        const next = url.searchParams.get("next") ?? "/";
        // The safe build keeps only a path of its own origin: one leading slash, no second slash or backslash.
        const location = vulnerable || /^\/(?![/\\])/.test(next) ? next : "/";
        response.writeHead(302, { location });
        return response.end();
      }
      if (route === "POST /api/drafts/restore") {
        const body = JSON.parse((await readBody(request)) || "{}") as { state?: unknown };
        if (typeof body.state !== "string") return json(response, 400, { error: "state required" });
        let restored: unknown;
        try {
          restored = JSON.parse(body.state);
        } catch {
          return json(response, 400, { error: "the draft cannot be read" });
        }
        // The vulnerable build revives node-serialize style functions (emulated: only `return a*b` runs).
        const revive = (value: unknown): unknown =>
          typeof value === "string" && vulnerable
            ? value.replace(
                /^_\$\$ND_FUNC\$\$_function\(\)\{return (\d+)\*(\d+)\}\(\)$/,
                (_w, a: string, b: string) => String(Number(a) * Number(b)),
              )
            : value;
        const object = restored && typeof restored === "object" ? (restored as Record<string, unknown>) : {};
        return json(response, 200, {
          restored: Object.fromEntries(Object.entries(object).map(([key, value]) => [key, revive(value)])),
        });
      }
      if (route === "POST /api/session") {
        const body = JSON.parse((await readBody(request)) || "{}") as Record<string, unknown>;
        // Every attempt is logged: as it came (vulnerable), or as one JSON line whose strings are escaped.
        if (typeof body.username === "string")
          fs.appendFileSync(
            signInLog,
            vulnerable
              ? `${new Date().toISOString()} sign-in attempt for ${body.username}\n`
              : `${JSON.stringify({ at: new Date().toISOString(), event: "sign-in attempt", user: body.username })}\n`,
          );
        if (!vulnerable && (typeof body.username !== "string" || typeof body.password !== "string"))
          return json(response, 400, { error: "username and password must be strings" });
        const user = USERS.find(
          (candidate) =>
            matches(candidate.username, body.username, vulnerable) &&
            matches(candidate.password, body.password, vulnerable),
        );
        return user
          ? json(response, 200, { token: `t-${user.username}` })
          : json(response, 401, { error: "refused" });
      }
      json(response, 404, { error: "not found" });
    })().catch((error: unknown) => json(response, 500, { error: String(error) }));
  });
  const { baseUrl, close } = await listenOnLoopback(server, root);
  return {
    baseUrl,
    document,
    root,
    escapedWrites,
    close,
  };
}

/** Starts a fixture server on a free loopback port; `close` stops it and removes its scratch folder. */
export async function listenOnLoopback(
  server: http.Server,
  root: string,
): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          fs.rmSync(root, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
