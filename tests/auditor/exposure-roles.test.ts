import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { higherRoleUsers, lookupParameters } from "../../src/probes/auditor/exposure-roles.ts";
import { securityTools } from "../../src/tools/servers/security-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { callTool } from "../support/fake-run-context.ts";

// A back-office lookup that finds a person by email, refused to members and answered to staff: only a
// staff caller asking for an address the run knows gets the record, and in the vulnerable build that
// record carries the person's password hash. The safe build answers the same record without it.

const PEOPLE = [
  { id: 1, username: "mia@desk.test", password: "mia-pw", role: "member", name: "Mia Ross" },
  { id: 2, username: "ned@desk.test", password: "ned-pw", role: "member", name: "Ned Hale" },
  { id: 3, username: "sol@desk.test", password: "sol-pw", role: "staff", name: "Sol Vega" },
];
const HASH = "$2b$12$C6UzMDM.H6dfI/f/IKxGhu4WQ6CDS1jZzj1bH0X4/3lZ2O5Yk5h9K";

function startServer(leaky: boolean): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const tokens = new Map<string, (typeof PEOPLE)[number]>();
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://fixture");
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    let raw = "";
    request.on("data", (chunk) => {
      raw += chunk;
    });
    request.on("end", () => {
      if (request.method === "POST" && url.pathname === "/api/login") {
        const body = JSON.parse(raw || "{}") as { username?: string; password?: string };
        const person = PEOPLE.find((p) => p.username === body.username && p.password === body.password);
        if (!person) return send(401, { error: "bad credentials" });
        const token = `t${person.id}${Math.random().toString(36).slice(2)}`;
        tokens.set(token, person);
        return send(200, { token });
      }
      const caller = tokens.get((request.headers.authorization ?? "").replace(/^Bearer\s+/i, ""));
      if (!caller) return send(401, { error: "sign in" });
      if (url.pathname === "/api/me") return send(200, { id: caller.id, email: caller.username });
      if (url.pathname === "/api/back/people/find") {
        if (caller.role !== "staff") return send(403, { error: "staff only" });
        const found = PEOPLE.find((person) => person.username === url.searchParams.get("email"));
        if (!found) return send(404, { error: "nobody with that email" });
        const record = { id: found.id, email: found.username, name: found.name, role: found.role };
        return send(200, { person: leaky ? { ...record, password_hash: HASH } : record });
      }
      send(404, { error: "not found" });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        baseUrl: `http://127.0.0.1:${port}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    }),
  );
}

function contextFor(baseUrl: string) {
  for (const person of PEOPLE) process.env[`ROLES_FIXTURE_${person.id}`] = person.password;
  const find = undocumented("GET", "/api/back/people/find");
  find.parameters = [{ name: "email", in: "query", required: true, schema: { type: "string" } }];
  const map = systemMapFor({
    target: "desk",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "desk", version: "1" }, paths: {} },
    extraOperations: [undocumented("GET", "/api/me"), find],
  });
  const profile = profileFor({
    name: "desk",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
    auth: { login: { kind: "json", endpoint: "POST /api/login", token_from: "body:token" } },
    users: PEOPLE.map((person) => ({
      name: person.username.split("@")[0],
      username: person.username,
      role: person.role,
      tenant: "one",
      password: `secret_ref:ROLES_FIXTURE_${person.id}`,
    })),
  });
  return probeContext({ profile, map, agent: "AUDITOR" });
}

async function scan(baseUrl: string): Promise<EnvelopeDraft[]> {
  const tool = securityTools.find((candidate) => candidate.name === "scan_exposure")!;
  const result = await callTool(tool, {}, contextFor(baseUrl));
  if (!result.ok) throw new Error(result.error);
  return (result.data as { candidates: EnvelopeDraft[] }).candidates;
}

describe("scan_exposure reads what members are refused as a higher role", { timeout: 60_000 }, () => {
  let leaky: Awaited<ReturnType<typeof startServer>>;
  let safe: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    [leaky, safe] = await Promise.all([startServer(true), startServer(false)]);
  });
  afterAll(async () => {
    await Promise.all([leaky.close(), safe.close()]);
  });

  it("finds the hash a staff lookup answers for a known address; the safe lookup is silent", async () => {
    const found = await scan(leaky.baseUrl);
    expect(found.map((draft) => `${draft.defect_class} ${draft.location.value}`)).toEqual([
      "sensitive-data-exposure GET /api/back/people/find",
    ]);
    expect(found[0]!.title).toContain("bcrypt password hash");
    // Other people's names and emails are a staff lookup's purpose, not an exposure.
    expect(await scan(safe.baseUrl)).toEqual([]);
  });

  it("chooses one user per higher role and the parameters that name a person", () => {
    const users = [
      { name: "a", role: "member" },
      { name: "b", role: "member" },
      { name: "c", role: "staff" },
      { name: "d", role: "admin" },
    ] as Parameters<typeof higherRoleUsers>[0];
    expect(higherRoleUsers(users, users[0]).map((user) => user.name)).toEqual(["c", "d"]);
    const names = lookupParameters([
      { name: "email", in: "query", required: true },
      { name: "user_email", in: "query", required: false },
      { name: "q", in: "query", required: false },
      { name: "contact", in: "query", required: false, schema: { format: "email" } },
    ]).map((parameter) => parameter.name);
    expect(names).toEqual(["email", "user_email", "contact"]);
  });
});
