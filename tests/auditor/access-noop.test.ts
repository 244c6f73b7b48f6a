import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkCrossTenantNoOps } from "../../src/probes/auditor/access-noop.ts";
import type { ProbeRun } from "../../src/probes/session/probe-run.ts";
import { openProbeRun, usableUsers } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";

// Tickets of two tenants and a status action on one ticket. The vulnerable build lets any agent set the
// status of any ticket; the safe one refuses another tenant's ticket. The probe only ever sends the status
// a ticket already has, so the tickets must come out of both builds unchanged.

const TENANT_OF: Record<string, string> = { ada: "north", bo: "south" };

function startServer(vulnerable: boolean) {
  const tickets = [
    { id: 1, tenant: "north", title: "Printer jam", status: "open" },
    { id: 2, tenant: "south", title: "VPN down", status: "waiting" },
  ];
  const writes: string[] = [];
  const tokens = new Map<string, string>();
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
      const body = JSON.parse(raw || "{}") as Record<string, string>;
      if (request.method === "POST" && url.pathname === "/api/login") {
        if (!body.username || body.password !== `${body.username}-pw`) return send(401, {});
        const token = `${body.username}-${Math.random().toString(36).slice(2)}`;
        tokens.set(token, body.username);
        return send(200, { token });
      }
      const user = tokens.get((request.headers.authorization ?? "").replace(/^Bearer\s+/i, ""));
      if (!user) return send(401, { error: "sign in" });
      const tenant = TENANT_OF[user];
      if (request.method === "GET" && url.pathname === "/api/tickets")
        return send(200, { tickets: tickets.filter((ticket) => ticket.tenant === tenant) });
      const match = /^\/api\/tickets\/(\d+)\/status$/.exec(url.pathname);
      if (request.method === "POST" && match) {
        const ticket = tickets.find((candidate) => candidate.id === Number(match[1]));
        if (!ticket || (!vulnerable && ticket.tenant !== tenant))
          return send(404, { error: "no such ticket" });
        if (!["open", "waiting", "closed"].includes(body.status ?? ""))
          return send(200, { ok: false, error: "unknown status" });
        writes.push(`${user} ${ticket.id} ${ticket.status}->${body.status}`);
        ticket.status = body.status!;
        return send(200, { ok: true, id: ticket.id, status: ticket.status });
      }
      send(404, { error: "not found" });
    });
  });
  return new Promise<{
    baseUrl: string;
    tickets: typeof tickets;
    writes: string[];
    close: () => Promise<void>;
  }>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        baseUrl: `http://127.0.0.1:${port}`,
        tickets,
        writes,
        close: () => new Promise((done) => server.close(() => done())),
      });
    }),
  );
}

function runFor(baseUrl: string, allowWrites = true): ProbeRun {
  for (const name of Object.keys(TENANT_OF)) process.env[`NOOP_FIXTURE_${name.toUpperCase()}`] = `${name}-pw`;
  const status = undocumented("POST", "/api/tickets/{ticketId}/status", ["frontend"]);
  status.parameters = [{ name: "ticketId", in: "path", required: true }];
  status.request_body = {
    content_type: "application/json",
    required: true,
    schema: { type: "object", properties: { status: { type: "string" } } },
  };
  const map = systemMapFor({
    target: "desk",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "desk", version: "1" }, paths: {} },
    extraOperations: [undocumented("GET", "/api/tickets", ["frontend"]), status],
  });
  const profile = profileFor({
    name: "desk",
    source: {},
    environment: { mode: allowWrites ? "managed" : "external", base_url: baseUrl, allow_writes: allowWrites },
    auth: { login: { kind: "json", endpoint: "POST /api/login", token_from: "body:token" } },
    users: Object.entries(TENANT_OF).map(([name, tenant]) => ({
      name,
      role: "agent",
      tenant,
      password: `secret_ref:NOOP_FIXTURE_${name.toUpperCase()}`,
    })),
  });
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "authz_matrix");
  if (typeof run === "string") throw new Error(run);
  return run;
}

async function leaksOn(baseUrl: string): Promise<string[]> {
  const run = runFor(baseUrl);
  const leaks = await checkCrossTenantNoOps(run, run.map.operations, await usableUsers(run));
  return leaks.map((leak) => `${leak.operation.path} ${leak.principal.user?.name} on ${leak.owner}'s`);
}

describe("checkCrossTenantNoOps", { timeout: 60_000 }, () => {
  let vulnerable: Awaited<ReturnType<typeof startServer>>;
  let safe: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    [vulnerable, safe] = await Promise.all([startServer(true), startServer(false)]);
  });
  afterAll(async () => {
    await Promise.all([vulnerable.close(), safe.close()]);
  });

  it("finds another tenant accepted on a status action, writing only the status each ticket had", async () => {
    expect(await leaksOn(vulnerable.baseUrl)).toEqual(["/api/tickets/{ticketId}/status bo on ada's"]);
    expect(vulnerable.writes.every((write) => /(\w+)->\1$/.test(write))).toBe(true);
    expect(vulnerable.writes).toContain("bo 1 open->open");
    expect(vulnerable.tickets.map((ticket) => ticket.status)).toEqual(["open", "waiting"]);
  });

  it("is silent when the tenant is checked, and sends nothing to an external target that allows no writes", async () => {
    expect(await leaksOn(safe.baseUrl)).toEqual([]);
    expect(safe.tickets.map((ticket) => ticket.status)).toEqual(["open", "waiting"]);
    const run = runFor(safe.baseUrl, false);
    const before = safe.writes.length;
    expect(await checkCrossTenantNoOps(run, run.map.operations, await usableUsers(run))).toEqual([]);
    expect(safe.writes.length).toBe(before);
  });
});
