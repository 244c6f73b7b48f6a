import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { authzFindings } from "../fixtures/authz-run.ts";
import { undocumented, undocumentedPost } from "../fixtures/probe-harness.ts";

// A bearer-token JSON API of private notes: a note's own read answers its owner only (401 to anonymous
// callers). `flawed` serves a CSV export of every note to anyone — documented as public, as a framework
// documents a route without a credential dependency; `sound` answers it only to a signed-in caller, with
// their own notes. Both show every note's title on a showcase their document declares public
// (`security: []`), a choice the document states, and list titles and owners in a directory that withholds
// the notes' bodies (a showcase too, though undeclared): neither is a leak.

const TOKENS: Record<string, string> = { "token-ada": "ada", "token-ben": "ben" };

interface Entry {
  id: number;
  owner: string;
  title: string;
  body: string;
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function startNotes(build: "flawed" | "sound"): Promise<string> {
  let next = 11;
  const notes = new Map<number, Entry>();
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
    const caller = TOKENS[(request.headers.authorization ?? "").replace(/^Bearer\s+/i, "")];
    const send = (status: number, value: unknown, type = "application/json") => {
      response.writeHead(status, { "content-type": type });
      response.end(typeof value === "string" ? value : JSON.stringify(value));
    };
    const url = new URL(request.url ?? "/", "http://fixture.invalid");
    const route = `${request.method} ${url.pathname}`;
    if (route === "GET /showcase")
      return send(200, { titles: [...notes.values()].map((note) => note.title) });
    if (route === "GET /directory")
      return send(
        200,
        [...notes.values()].map(({ title, owner }) => ({ title, owner })),
      );
    if (route === "GET /export" && (build === "flawed" || caller)) {
      const rows = [...notes.values()].filter((note) => build === "flawed" || note.owner === caller);
      const csv = [
        "id,owner,title,body",
        ...rows.map((note) => `${note.id},${note.owner},${note.title},${note.body}`),
      ];
      return send(200, csv.join("\n"), "text/csv");
    }
    if (!caller) return send(401, { error: "sign in first" });
    if (route === "POST /notes") {
      if (typeof body.title !== "string" || !body.title) return send(400, { error: "title is required" });
      const entry = { id: next++, owner: caller, title: body.title, body: String(body.body ?? "") };
      notes.set(entry.id, entry);
      return send(201, entry);
    }
    if (route === "GET /notes")
      return send(
        200,
        [...notes.values()].filter((note) => note.owner === caller),
      );
    const note = url.pathname.match(/^\/notes\/(\d+)$/);
    const found = note ? notes.get(Number(note[1])) : undefined;
    if (request.method === "GET" && found && found.owner === caller) return send(200, found);
    return send(404, { error: "not found" });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function read(path: string, security: Operation["security"] = "unknown", declared = false): Operation {
  const parameters: Operation["parameters"] = path.includes("{id}")
    ? [{ name: "id", in: "path", required: true, schema: { type: "integer" } }]
    : [];
  return {
    ...undocumented("GET", path, ["source"]),
    parameters,
    security,
    ...(declared ? { declared_public: true } : {}),
  };
}

async function findings(build: "flawed" | "sound"): Promise<string[]> {
  const fields = { title: { type: "string" }, body: { type: "string" } };
  return authzFindings("disclosure", await startNotes(build), [
    read("/notes"),
    undocumentedPost("/notes", "application/json", fields, ["title", "body"]),
    read("/notes/{id}"),
    read("/export", "public"),
    read("/showcase", "public", true),
    read("/directory", "public"),
  ]);
}

describe("authz_matrix on private records in anonymous answers", () => {
  it("reports a public export that shows a note whose own read refuses anonymous callers", async () => {
    expect(await findings("flawed")).toEqual(["missing-authentication GET /export"]);
  });

  it("leaves an export that asks for credentials alone", async () => {
    expect(await findings("sound")).toEqual([]);
  });
});
