import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkNestedPages } from "../../src/probes/auditor/access-nested.ts";
import type { ProbeRun } from "../../src/probes/session/probe-run.ts";
import { openProbeRun, usableUsers } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";

// Server-rendered orders with notes under them, known only from a crawl. The vulnerable build checks that
// the caller owns the order in the path but serves any note by id; the safe build also checks the note
// belongs to that order. A third build serves one generic page for any note id (it ignores the id).

type Build = "vulnerable" | "safe" | "generic";
const ORDERS = [
  { id: 11, owner: "ann", notes: [101, 102] },
  { id: 12, owner: "ann", notes: [] as number[] },
  { id: 21, owner: "bob", notes: [201] },
];
const NOTE_TEXT: Record<number, string> = {
  101: "Deliver to the back door, gate code 4471.",
  102: "Gift wrap, no invoice in the parcel.",
  201: "Leave with the neighbour at number 9.",
};

function html(user: string, main: string): string {
  return `<!doctype html><html><body><nav><a href="/orders">Orders</a> <span>${user}</span></nav><main>${main}</main></body></html>`;
}

function startServer(build: Build): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const tokens = new Map<string, string>();
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://fixture");
    const send = (status: number, body: string, type = "text/html") => {
      response.writeHead(status, { "content-type": type });
      response.end(body);
    };
    let raw = "";
    request.on("data", (chunk) => {
      raw += chunk;
    });
    request.on("end", () => {
      if (request.method === "POST" && url.pathname === "/api/login") {
        const body = JSON.parse(raw || "{}") as { username?: string; password?: string };
        if (!body.username || body.password !== `${body.username}-pw`)
          return send(401, "{}", "application/json");
        const token = `${body.username}-${Math.random().toString(36).slice(2)}`;
        tokens.set(token, body.username);
        return send(200, JSON.stringify({ token }), "application/json");
      }
      const user = tokens.get((request.headers.authorization ?? "").replace(/^Bearer\s+/i, ""));
      if (!user) return send(401, html("", "<p>Sign in first.</p>"));
      const mine = ORDERS.filter((order) => order.owner === user);
      if (url.pathname === "/orders")
        return send(
          200,
          html(user, mine.map((o) => `<a href="/orders/${o.id}">Order ${o.id}</a>`).join(" ")),
        );
      const match = /^\/orders\/(\d+)(?:\/notes\/(\d+))?$/.exec(url.pathname);
      const order = match && mine.find((candidate) => candidate.id === Number(match[1]));
      if (!match || !order) return send(404, html(user, "<h1>Not found</h1><p>No such page here.</p>"));
      if (!match[2])
        return send(
          200,
          html(
            user,
            `<h1>Order ${order.id}</h1>${order.notes.map((n) => `<a href="/orders/${order.id}/notes/${n}">Note ${n}</a>`).join(" ")}`,
          ),
        );
      const note = Number(match[2]);
      if (build === "generic")
        return send(200, html(user, "<h1>Note</h1><p>Notes are shown to the courier only.</p>"));
      const allowed = build === "vulnerable" ? note in NOTE_TEXT : order.notes.includes(note);
      if (!allowed) return send(404, html(user, "<h1>Not found</h1><p>No such page here.</p>"));
      send(
        200,
        html(user, `<h1>Delivery note</h1><p>${NOTE_TEXT[note]}</p><a href="/orders/${order.id}">Back</a>`),
      );
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

function runFor(baseUrl: string, crawled = "/orders/11/notes/101"): ProbeRun {
  for (const name of ["ann", "bob", "cid"])
    process.env[`NESTED_FIXTURE_${name.toUpperCase()}`] = `${name}-pw`;
  const map = systemMapFor({
    target: "shop",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "shop", version: "1" }, paths: {} },
    extraOperations: [
      undocumented("GET", "/orders", ["link"]),
      undocumented("GET", "/orders/{orderId}", ["link"]),
      undocumented("GET", "/orders/{orderId}/notes/{noteId}", ["link"]),
    ],
    pages: [
      { path: crawled, status: 200, links: [], forms: [], roles: ["customer"] },
      { path: "/orders/11", status: 200, links: [], forms: [], roles: ["customer"] },
    ],
  });
  const profile = profileFor({
    name: "shop",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
    auth: { login: { kind: "json", endpoint: "POST /api/login", token_from: "body:token" } },
    users: ["ann", "bob", "cid"].map((name) => ({
      name,
      role: "customer",
      tenant: "shop",
      password: `secret_ref:NESTED_FIXTURE_${name.toUpperCase()}`,
    })),
  });
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "authz_matrix");
  if (typeof run === "string") throw new Error(run);
  return run;
}

async function leaksOn(baseUrl: string, crawled?: string): Promise<string[]> {
  const run = runFor(baseUrl, crawled);
  const users = await usableUsers(run);
  const leaks = await checkNestedPages(run, run.map.operations, users);
  return leaks.map(
    (leak) =>
      `${leak.operation.path} ${leak.principal.user?.name} reads ${leak.owner}'s via ${leak.steps.at(-1)?.path}`,
  );
}

describe("checkNestedPages", { timeout: 60_000 }, () => {
  const servers: Partial<Record<Build, { baseUrl: string; close: () => Promise<void> }>> = {};
  beforeAll(async () => {
    for (const build of ["vulnerable", "safe", "generic"] as const) servers[build] = await startServer(build);
  });
  afterAll(async () => {
    await Promise.all(Object.values(servers).map((server) => server?.close()));
  });

  it("reads the owner's child under the caller's own parent when the child is never checked", async () => {
    expect(await leaksOn(servers.vulnerable!.baseUrl)).toEqual([
      "/orders/{orderId}/notes/{noteId} bob reads ann's via /orders/21/notes/101",
    ]);
  });

  it("finds the users' own children when the crawled ids are gone", async () => {
    expect(await leaksOn(servers.vulnerable!.baseUrl, "/orders/13/notes/999")).toEqual([
      "/orders/{orderId}/notes/{noteId} bob reads ann's via /orders/21/notes/101",
    ]);
    expect(await leaksOn(servers.safe!.baseUrl, "/orders/13/notes/999")).toEqual([]);
  });

  it("is silent when the child is checked against its parent, and on a page that ignores the child id", async () => {
    expect(await leaksOn(servers.safe!.baseUrl)).toEqual([]);
    expect(await leaksOn(servers.generic!.baseUrl)).toEqual([]);
  });
});
