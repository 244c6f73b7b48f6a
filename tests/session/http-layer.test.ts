import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Semaphore } from "../../src/probes/http/concurrency.ts";
import { curlLine } from "../../src/probes/http/curl.ts";
import {
  BudgetExhaustedError,
  HttpClient,
  RequestBudget,
  WriteNotAllowedError,
} from "../../src/probes/http/http-client.ts";
import type { HttpExchange } from "../../src/probes/http/http-types.ts";
import { Masker } from "../../src/probes/http/masking.ts";
import { matchesTemplate, toTemplateForm } from "../../src/probes/http/target-url.ts";
import { byPrivilege, outsidersOf, roleRank } from "../../src/probes/session/roles.ts";
import { SessionPool } from "../../src/probes/session/session-pool.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";

let server: http.Server;
let baseUrl: string;
let inFlight = 0;
let peak = 0;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    inFlight += 1;
    peak = Math.max(peak, inFlight);
    setTimeout(
      () => {
        inFlight -= 1;
        if (request.url === "/slow") return;
        response.writeHead(200, { "content-type": "application/json", "set-cookie": ["a=1; Path=/"] });
        response.end(JSON.stringify({ method: request.method }));
      },
      request.url === "/slow" ? 2000 : 15,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("HTTP client", () => {
  it("never has more requests in flight than the run-wide cap, and counts every one", async () => {
    peak = 0;
    const limiter = new Semaphore(3);
    const agent = new RequestBudget(100);
    const clients = [
      new HttpClient({ limiter, budget: new RequestBudget(50, agent), writesAllowed: true }),
      new HttpClient({ limiter, budget: new RequestBudget(50, agent), writesAllowed: true }),
    ];
    await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        clients[index % 2]!.send({ method: "GET", url: `${baseUrl}/x` }),
      ),
    );
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThanOrEqual(2);
    expect(agent.used).toBe(24);
    expect(clients.map((client) => client.stats.sent)).toEqual([12, 12]);
  });

  it("refuses writes when the target forbids them and stops at its budget", async () => {
    const client = new HttpClient({
      limiter: new Semaphore(2),
      budget: new RequestBudget(2),
      writesAllowed: false,
    });
    await expect(client.send({ method: "DELETE", url: `${baseUrl}/x` })).rejects.toBeInstanceOf(
      WriteNotAllowedError,
    );
    expect(client.stats.skipped_writes).toBe(1);
    await client.send({ method: "GET", url: `${baseUrl}/x` });
    await client.send({ method: "GET", url: `${baseUrl}/x` });
    await expect(client.send({ method: "GET", url: `${baseUrl}/x` })).rejects.toBeInstanceOf(
      BudgetExhaustedError,
    );
    expect(client.stats.sent).toBe(2);
  });

  it("times out a request that never answers, records why, and frees its slot", async () => {
    const client = new HttpClient({
      limiter: new Semaphore(1),
      budget: new RequestBudget(5),
      writesAllowed: true,
      timeoutMs: 200,
    });
    const slow = await client.send({ method: "GET", url: `${baseUrl}/slow` });
    expect(slow.error).toBe("timeout");
    expect(slow.response).toBeUndefined();
    const next = await client.send({ method: "GET", url: `${baseUrl}/x` });
    expect(next.response?.status).toBe(200);
    expect(next.response?.setCookies).toEqual(["a=1; Path=/"]);
  });
});

describe("masking and reproduction lines", () => {
  const exchange: HttpExchange = {
    sequence: 1,
    startedAt: "2026-01-01T00:00:00Z",
    user: "alice",
    durationMs: 3,
    request: {
      method: "POST",
      url: "http://127.0.0.1:9/api/x?token=abcdef123456&q=ok",
      headers: { authorization: "Bearer abcdef123456", "content-type": "application/json" },
      body: '{"password":"hunter22","name":"it\'s"}',
    },
    response: undefined,
  };

  it("masks credentials, secret-named fields and secret-shaped values but keeps the shape", () => {
    const masker = new Masker();
    masker.addSecret("abcdef123456");
    expect(
      masker.maskHeaders({ authorization: "Bearer abcdef123456", cookie: "sid=zzzzzzzz; theme=dark" }),
    ).toEqual({
      authorization: "Bearer abc…[masked 9 chars]",
      cookie: "sid=zz…[masked 6 chars]; theme=***",
    });
    expect(masker.maskBody('{"password":"hunter22","user":{"api_key":"k-123456789"},"note":"ok"}')).toBe(
      JSON.stringify(
        { password: "hu…[masked 6 chars]", user: { api_key: "k-…[masked 9 chars]" }, note: "ok" },
        null,
        2,
      ),
    );
    const bcrypt = "$2b$10$abcdefghijklmnopqrstuu7Q1n0S2x9cQ0kqGJ1t0ZK8b5mVNQeWa";
    expect(masker.maskText(`hash=${bcrypt}`)).not.toContain(bcrypt.slice(10));
    expect(masker.maskUrl(exchange.request.url)).toBe(
      "http://127.0.0.1:9/api/x?token=abc%E2%80%A6%5Bmasked%209%20chars%5D&q=ok",
    );
  });

  it("keeps a profile user's name readable when its password is that name, and hides it by field", () => {
    const pool = new SessionPool(
      TargetProfileSchema.parse({
        name: "shop",
        source: { path: "." },
        environment: { mode: "external", base_url: "http://127.0.0.1:9" },
        users: [{ name: "admin", role: "user", username: "admin", password: "secret_ref:SHOP_ADMIN" }],
      }),
      "http://127.0.0.1:9",
    );
    const { masker } = pool;
    masker.addSecret("admin");
    masker.addPassword("long-enough-password");
    masker.addPassword("pass");
    const step = '{"as":"admin","path":"/search?q=pass"} long-enough-password';
    expect(masker.maskText(step)).toBe('{"as":"admin","path":"/search?q=pass"} long-…[masked 15 chars]');
    expect(masker.maskBody("username=admin&password=admin")).toBe(
      "username=admin&password=a%E2%80%A6%5Bmasked%204%20chars%5D",
    );

    // A secret learnt before the name is public stops being masked as text once it is.
    const early = new Masker();
    early.addSecret("roberto");
    early.addPublicName("roberto");
    expect(early.maskText("as roberto")).toBe("as roberto");
  });

  it("writes a curl line with the credential as a variable to fill in", () => {
    const line = curlLine(exchange, new Masker());
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the curl line carries a shell variable on purpose.
    expect(line).toContain('-H "authorization: Bearer ${QAAS_TOKEN_ALICE}"');
    expect(line).toContain('--data-raw \'{"password":"hu…[masked 6 chars]"');
    expect(line).toContain(`it'\\''s`);
    expect(line).not.toContain("abcdef123456");
  });

  it("normalises path templates and matches concrete paths", () => {
    expect(toTemplateForm("/api/users/:id/<int:post>")).toBe("/api/users/{id}/{post}");
    expect(matchesTemplate("/api/users/{id}", "/api/users/17")).toEqual({ id: "17" });
    expect(matchesTemplate("/api/users/{id}", "/api/users/17/posts")).toBeUndefined();
  });
});

describe("role ranking", () => {
  const users = [
    { name: "root", role: "Owner" },
    { name: "ann", role: "admin" },
    { name: "mia", role: "manager" },
    { name: "bo", role: "member", tenant: "t1" },
    { name: "cy", role: "member", tenant: "t1" },
    { name: "di", role: "member", tenant: "t2" },
    { name: "gus", role: "guest", tenant: "t1" },
  ];

  it("ranks roles by what their names usually mean", () => {
    expect(byPrivilege(users).map((user) => user.name)).toEqual([
      "gus",
      "bo",
      "cy",
      "di",
      "mia",
      "ann",
      "root",
    ]);
    expect(roleRank("custom-role")).toBe(30);
  });

  it("lists who must not see a member's data: a peer, another tenant, a lower role", () => {
    const owner = users.find((user) => user.name === "bo")!;
    expect(outsidersOf(owner, users).map(({ user, relation }) => `${user.name}:${relation}`)).toEqual([
      "cy:same-role",
      "di:other-tenant",
      "gus:lower-role",
    ]);
  });
});

describe("excluded operations", () => {
  it("never sends an operation the profile excludes, whatever the concrete id", async () => {
    const { openHttpClient } = await import("../../src/probes/http/run-http.ts");
    const { profileFor, probeContext, systemMapFor } = await import("../fixtures/probe-harness.ts");
    const profile = profileFor({
      name: "excluded",
      source: {},
      environment: { mode: "managed", base_url: baseUrl },
      api: { exclude: ["POST /api/items/{id}/reset", "DELETE /api/all", "GET /mode/{level}"] },
    });
    const context = probeContext({
      profile,
      map: systemMapFor({ target: "excluded", baseUrl, document: { openapi: "3.0.3", paths: {} } }),
    });
    const client = openHttpClient(context, { baseUrl, profile, mode: "managed", writesAllowed: true });
    await expect(client.send({ method: "POST", url: `${baseUrl}/api/items/42/reset` })).rejects.toThrow(
      /excluded by the profile/,
    );
    await expect(client.send({ method: "DELETE", url: `${baseUrl}/api/all` })).rejects.toThrow(/excluded/);
    // A template stands for any value, not only an id: a link that switches a mode is as excluded.
    await expect(client.send({ method: "GET", url: `${baseUrl}/mode/expert` })).rejects.toThrow(/excluded/);
    expect(
      (await client.send({ method: "POST", url: `${baseUrl}/api/items/42/archive` })).response?.status,
    ).toBe(200);
    expect(client.stats.sent).toBe(1);
  });
});

describe("slow operations", () => {
  it("blames a stall on the request that started it, not on the ones queued behind it", async () => {
    const { SlowOperations } = await import("../../src/probes/http/slow-operations.ts");
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    for (const key of ["GET /report", "GET /items", "GET /fast"]) expect(await pacing.enter(key)).toBe(true);
    // The report starts the stall at 5 000 ms; the list request, sent later, answers right after it.
    pacing.leave("GET /report", 5000);
    now += 3;
    pacing.leave("GET /items", 4990);
    pacing.leave("GET /fast", 20);
    expect(await pacing.enter("GET /report")).toBe(false);
    expect(await pacing.enter("GET /items")).toBe(true);
    expect(await pacing.enter("GET /fast")).toBe(true);
    expect(pacing.report()).toEqual({ "GET /report": 1 });
  });

  it("does not blame a request sent a moment before the stall and answered after it", async () => {
    const { SlowOperations } = await import("../../src/probes/http/slow-operations.ts");
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    for (const key of ["GET /list", "GET /report"]) expect(await pacing.enter(key)).toBe(true);
    // The list was sent 5 ms before the report but the server ran the report first: it answers after it.
    pacing.leave("GET /report", 5000);
    now += 2;
    pacing.leave("GET /list", 5007);
    expect(await pacing.enter("GET /report")).toBe(false);
    expect(await pacing.enter("GET /list")).toBe(true);
    expect(pacing.report()).toEqual({ "GET /report": 1 });
  });

  it("lets only the first request to an unknown operation go until it answers", async () => {
    const { SlowOperations } = await import("../../src/probes/http/slow-operations.ts");
    const pacing = new SlowOperations();
    expect(await pacing.enter("GET /x")).toBe(true);
    let second = false;
    const waiting = pacing.enter("GET /x").then((admitted) => {
      second = admitted;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(second).toBe(false);
    pacing.leave("GET /x", 5);
    await waiting;
    expect(second).toBe(true);
  });
});
