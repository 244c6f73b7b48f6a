import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import type { Operation, Page } from "../../src/map/system-map.ts";
import { probeInjectionTool } from "../../src/tools/servers/security-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { callTool } from "../support/fake-run-context.ts";

// A server-rendered search behind a sign-in form: an anonymous visitor is redirected to the sign-in page
// (the crawler saw it reach the page, so its roles include anonymous), and every search lists the caller's
// notes, among them those the run's own probes keep creating (`qaas-…`, one more note per search here).
// `/notes/search` pastes the term into SQL; `/notes/find` binds it.

const PASSWORD = "ann-password";

let baseUrl = "";
let server: http.Server;

beforeAll(async () => {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, owner TEXT, title TEXT)");
  db.prepare(
    "INSERT INTO notes (owner, title) VALUES ('ann', 'Groceries'), ('ann', 'Plants to water')",
  ).run();
  const sessions = new Set<string>();
  let created = 0;
  server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
    const url = new URL(request.url ?? "/", "http://fixture.invalid");
    const sid = /(?:^|;\s*)sid=(\w+)/.exec(request.headers.cookie ?? "")?.[1];
    const page = (status: number, body: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": "text/html; charset=utf-8", ...headers });
      response.end(`<!doctype html><html><body>${body}</body></html>`);
    };
    const route = `${request.method} ${url.pathname}`;
    if (route === "GET /login")
      return page(
        200,
        `<form method="post" action="/login"><input name="username"><input type="password" name="password"><button>Sign in</button></form>`,
      );
    if (route === "POST /login") {
      if (form.get("username") !== "ann" || form.get("password") !== PASSWORD)
        return page(
          200,
          `<p>Wrong name or password</p><form method="post" action="/login"><input name="username"><input type="password" name="password"></form>`,
        );
      const session = randomBytes(8).toString("hex");
      sessions.add(session);
      return page(303, "", { location: "/notes", "set-cookie": `sid=${session}; Path=/; HttpOnly` });
    }
    if (!sid || !sessions.has(sid)) return page(302, "", { location: "/login" });
    if (route === "GET /notes") return page(200, `<a href="/notes/search?q=x">Search</a>`);
    const term = url.searchParams.get("q") ?? "";
    if (route !== "GET /notes/search" && route !== "GET /notes/find") return page(404, "<h1>Not found</h1>");
    created += 1;
    db.prepare("INSERT INTO notes (owner, title) VALUES ('ann', ?)").run(`qaas-${created}`);
    try {
      const rows =
        route === "GET /notes/search"
          ? db.prepare(`SELECT title FROM notes WHERE owner = 'ann' AND title LIKE '%${term}%'`).all()
          : db.prepare("SELECT title FROM notes WHERE owner = 'ann' AND title LIKE ?").all(`%${term}%`);
      const titles = (rows as Array<{ title: string }>).map((row) => `<li>${row.title}</li>`).join("");
      return page(200, `<h1>Notes</h1><ul>${titles}</ul>`);
    } catch {
      return page(500, "<h1>Internal Server Error</h1>");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function searchOperation(path: string): Operation {
  return {
    ...undocumented("GET", path, ["source", "link"]),
    parameters: [{ name: "q", in: "query", required: false, schema: { type: "string" } }],
    roles: ["anonymous", "member"],
  };
}

const loginPage: Page = {
  path: "/login",
  status: 200,
  links: [],
  forms: [
    {
      action: "/login",
      method: "POST",
      fields: ["username", "password"],
      enctype: "application/x-www-form-urlencoded",
      inputs: [
        { name: "username", type: "text", required: false },
        { name: "password", type: "password", required: false },
      ],
    },
  ],
  roles: ["anonymous"],
  html: true,
} as Page;

async function findings(): Promise<EnvelopeDraft[]> {
  process.env.NOTES_ANN_PASSWORD = PASSWORD;
  const profile = profileFor({
    name: "notes-search",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
    auth: { login: { kind: "form", endpoint: "POST /login", page: "/login" } },
    users: [{ name: "ann", role: "member", username: "ann", password: "secret_ref:NOTES_ANN_PASSWORD" }],
  });
  const map = systemMapFor({
    target: "notes-search",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "none", version: "1" }, paths: {} },
    extraOperations: [searchOperation("/notes/search"), searchOperation("/notes/find")],
    pages: [loginPage],
  });
  const result = await callTool(probeInjectionTool, {}, probeContext({ profile, map, agent: "AUDITOR" }));
  if (!result.ok) throw new Error(result.error);
  return (result.data as { candidates: EnvelopeDraft[] }).candidates;
}

describe("SQL injection behind a sign-in redirect", () => {
  it("probes as the signed-in user, not as the anonymous visitor the sign-in page took", async () => {
    const found = await findings();
    expect(found.map((candidate) => `${candidate.defect_class} ${candidate.location.value}`)).toEqual([
      "injection GET /notes/search",
    ]);
  });
});
