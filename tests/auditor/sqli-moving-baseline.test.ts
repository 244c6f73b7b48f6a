import http from "node:http";
import type { AddressInfo } from "node:net";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { probeInjectionTool } from "../../src/tools/servers/security-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { callTool } from "../support/fake-run-context.ts";

// A note search whose results keep changing under the probe: every search stores one more note named like
// the records a run creates (`qaas-…`), as other agents' writes do during a nightly. The probe's usual word
// matches them, so its baseline never answers the same twice; a word nothing holds keeps it still. The
// vulnerable search pastes its input into a LIKE pattern and hides the error behind a plain 500; the safe
// one binds it.

let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT)");
  for (const title of ["standup", "retro", "planning"])
    db.prepare("INSERT INTO notes (title) VALUES (?)").run(title);
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    const q = url.searchParams.get("q") ?? "";
    db.prepare("INSERT INTO notes (title) VALUES (?)").run(`qaas-${Math.random().toString(36).slice(2, 8)}`);
    try {
      const rows =
        url.pathname === "/v/notes/search"
          ? db.prepare(`SELECT id, title FROM notes WHERE title LIKE '%${q}%' ORDER BY id`).all()
          : db.prepare("SELECT id, title FROM notes WHERE title LIKE ? ORDER BY id").all(`%${q}%`);
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(rows));
    } catch {
      response.writeHead(500, { "content-type": "text/html" }).end("<h1>Server Error (500)</h1>");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const search = {
  get: {
    parameters: [{ name: "q", in: "query", schema: { type: "string" } }],
    responses: { "200": { description: "notes" } },
  },
};

describe("probe_injection on a search whose answers the run's own writes keep changing", () => {
  it("tests again from a word nothing holds, and finds the pasted input but not the bound one", async () => {
    const document = {
      openapi: "3.0.3",
      info: { title: "notes", version: "1" },
      paths: { "/v/notes/search": search, "/s/notes/search": search },
    };
    const map = systemMapFor({ target: "notes", baseUrl, document });
    const profile = profileFor({
      name: "notes",
      source: {},
      environment: { mode: "managed", base_url: baseUrl },
    });
    const result = await callTool(probeInjectionTool, {}, probeContext({ profile, map, agent: "AUDITOR" }));
    if (!result.ok) throw new Error(result.error);
    const { candidates, stats } = result.data as { candidates: EnvelopeDraft[]; stats: { unstable: number } };
    expect(candidates.map((candidate) => candidate.location.value)).toEqual(["GET /v/notes/search"]);
    expect(stats.unstable).toBeGreaterThan(0);
  }, 60_000);
});
