import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeRedos, replayLengths } from "../../src/probes/load/redos.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// Email checks behind three reads: one that backtracks (its time doubles with each letter of a run that
// cannot match, as a pattern with nested repetition does — played with a timer, so a busy test machine
// cannot blur it), a linear pattern, and a handler that is slow whatever it is given. Only the first is
// ReDoS; the slow one is not, since its time does not grow with the input.

const LINEAR = /^[^@\s]+@[^@\s]+\.[a-z]{2,}$/;
/** Milliseconds a backtracking check spends on `value`: doubling per letter of a run that cannot match. */
const backtracking = (value: string) => (/^a+!$/.test(value) ? 2 ** (value.length - 22) : 0);
let server: http.Server;
let baseUrl: string;
const longest: Record<string, number> = {};
const seen: Record<string, number> = {};

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const email = url.searchParams.get("email") ?? "";
    longest[url.pathname] = Math.max(longest[url.pathname] ?? 0, email.length);
    const answer = (valid: boolean) =>
      response
        .writeHead(valid ? 200 : 400, { "content-type": "application/json" })
        .end(JSON.stringify({ valid }));
    const key = `${url.pathname} ${email.length}`;
    seen[key] = (seen[key] ?? 0) + 1;
    const sent = seen[key];
    // A busy machine: the first input answered slowly three times (once untimed), or, on the noisy path, the confirming climb's
    // first input (27 characters, seen a second time) answered slowly; the pattern itself backtracks.
    if (url.pathname === "/api/check-hiccup" && email.length === 13 && sent <= 3)
      setTimeout(() => answer(false), 400);
    else if (url.pathname === "/api/check-noisy" && email.length === 27 && sent >= 2)
      setTimeout(() => answer(false), 300);
    // A linear check on a busy machine: two slow answers early on, and a spike far past them.
    else if (
      url.pathname === "/api/check-spiky" &&
      ((email.length === 15 && sent <= 2) || email.length === 29)
    )
      setTimeout(() => answer(false), 300);
    else if (url.pathname === "/api/check-spiky") answer(false);
    else if (url.pathname === "/api/check-hiccup" || url.pathname === "/api/check-noisy")
      setTimeout(() => answer(false), backtracking(email));
    else if (url.pathname === "/api/check-after-price" && !url.searchParams.has("price"))
      response
        .writeHead(400, { "content-type": "application/json" })
        .end(JSON.stringify({ message: "Missing parameter 'price'" }));
    else if (url.pathname === "/api/check-nested" || url.pathname === "/api/check-after-price")
      setTimeout(() => answer(false), backtracking(email));
    else if (url.pathname === "/api/check-linear") answer(LINEAR.test(email));
    else setTimeout(() => answer(LINEAR.test(email)), 400);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function checksAt(paths: string[]) {
  const check = {
    get: {
      parameters: [{ name: "email", in: "query", required: true, schema: { type: "string" } }],
      responses: { "200": { description: "ok" }, "400": { description: "invalid" } },
    },
  };
  const document = {
    openapi: "3.0.3",
    info: { title: "checks", version: "1" },
    paths: Object.fromEntries(paths.map((path) => [path, check])),
  };
  const map = systemMapFor({ target: "checks", baseUrl, document });
  const profile = profileFor({
    name: "checks",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
  });
  return probeContext({ profile, map, agent: "LOAD" });
}

type Send = (status: number, body: unknown) => void;
interface JsonRequest {
  method: string;
  url: URL;
  body: Record<string, string>;
  headers: http.IncomingHttpHeaders;
}

/** A server of JSON answers on a free port, for the describes that need one of their own. */
async function jsonServer(handle: (request: JsonRequest, send: Send) => void) {
  const started = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => {
      text += chunk;
    });
    request.on("end", () => {
      const send: Send = (status, body) =>
        response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      handle(
        {
          method: request.method ?? "GET",
          url: new URL(request.url ?? "/", "http://localhost"),
          body: text ? (JSON.parse(text) as Record<string, string>) : {},
          headers: request.headers,
        },
        send,
      );
    });
  });
  await new Promise<void>((resolve) => started.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(started.address() as AddressInfo).port}`,
    close: async () => {
      started.closeAllConnections();
      await new Promise<void>((resolve) => started.close(() => resolve()));
    },
  };
}

describe("probe_redos", () => {
  it("reports the pattern that backtracks, with a test that fails on it, and stops growing the input there", async () => {
    const context = checksAt(["/api/check-nested", "/api/check-linear", "/api/check-slow"]);
    const outcome = await probeRedos(context, {});
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["GET /api/check-nested"]);
    const [finding] = outcome.candidates;
    expect(finding).toMatchObject({ defect_class: "slow-endpoint", domain: "performance" });
    expect(finding!.title).toMatch(/backtracks on email.*ReDoS/);
    // The replay sends its own input: it needs none of the probe's data.
    expect(finding!.reproduction.needs_probe_data).toBeUndefined();
    // The generated test fails while the pattern backtracks.
    const uri = finding!.evidence.find((item) => item.kind === "failing_test")?.uri ?? "";
    const file = path.join(context.artifactsDir, uri.replace(/^artifact:\/\/[^/]+\//, ""));
    const replay = await promisify(execFile)(process.execPath, ["--test", file], {
      env: { ...process.env, QAAS_BASE_URL: baseUrl },
    }).then(
      () => "passed",
      (error: { stdout?: string }) => error.stdout ?? "failed",
    );
    expect(replay).toMatch(/must check \d+ characters of email in about the time of \d+/);
    const fields = outcome.stats.fields as Array<{ field: string; result: string }>;
    expect(Object.fromEntries(fields.map((entry) => [entry.field, entry.result]))).toEqual({
      "GET /api/check-nested query email": "redos",
      "GET /api/check-linear query email": "no slowdown",
      "GET /api/check-slow query email": "slow without growth",
    });
    // Bounded: the input stopped growing at the first slow answer, far below the lengths that freeze.
    expect(longest["/api/check-nested"]).toBeLessThanOrEqual(33);
  }, 60_000);

  it("adds the field an answer says is missing, so the pattern checked after it is reached", async () => {
    const outcome = await probeRedos(checksAt(["/api/check-after-price"]), {});
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["GET /api/check-after-price"]);
    expect(outcome.stats.fields).toEqual([
      expect.objectContaining({ result: "redos", added_fields: ["price"] }),
    ]);
  }, 60_000);

  it("passes over a slow answer a busy machine gives, in the first climb and in the confirming one", async () => {
    const outcome = await probeRedos(checksAt(["/api/check-hiccup", "/api/check-noisy"]), {});
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual([
      "GET /api/check-hiccup",
      "GET /api/check-noisy",
    ]);
    const [hiccup, noisy] = outcome.stats.fields as Array<{
      climb_again: Array<{ length: number; ms: number }>;
    }>;
    expect(hiccup).toMatchObject({ result: "redos" });
    // The confirming climb went on past its slow first step to the length the first climb found slow.
    expect(noisy!.climb_again.map((time) => time.length)).toEqual([26, 28, 30]);
  }, 60_000);

  it("does not take a busy machine's spikes for growth: the second climb ends near the first slow length", async () => {
    const outcome = await probeRedos(checksAt(["/api/check-spiky"]), {});
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates).toEqual([]);
    expect(outcome.stats.fields).toEqual([expect.objectContaining({ result: "did not grow again" })]);
  }, 60_000);

  /** A warm climb from its times at successive lengths, two letters apart, ending at 28. */
  const climb = (...times: number[]) =>
    times.map((ms, index) => ({ length: 28 - 2 * (times.length - 1 - index), ms }));

  it("sets the replayed inputs apart by how steeply the pattern grows, within a bound past the probe's input", () => {
    // Quadrupling every two letters: four letters apart is sixteen times, already decisive.
    expect(replayLengths(climb(25, 100, 410), 28)).toEqual({ length: 28, span: 4 });
    // Not quite doubling every two letters: eight letters apart, and the longer input two steps further.
    expect(replayLengths(climb(56, 97, 171), 28)).toEqual({ length: 32, span: 8 });
    // Never more than four letters past the slowest input the probe sent, however shallow the growth.
    expect(replayLengths(climb(150, 160), 28).length).toBe(32);
  });
});

// Updates are probed only on a record the probe creates for the purpose: a phone field checked with a
// pattern that backtracks on runs of digits (letters would fail at once), behind `PATCH /contacts/{id}`;
// `PUT /invoices/{id}` addresses only invoices someone else made (its list shows one), so it is never sent.
describe("probe_redos on updates", () => {
  let updates: Awaited<ReturnType<typeof jsonServer>>;
  let updatesUrl: string;
  const created = new Set<string>();
  const patched = new Set<string>();
  let invoiceWrites = 0;

  beforeAll(async () => {
    let next = 1;
    updates = await jsonServer(({ method, url, body }, send) => {
      if (method === "POST" && url.pathname === "/api/contacts") {
        const id = String(next++);
        created.add(id);
        return send(201, { id: Number(id), name: body.name });
      }
      const contact = /^\/api\/contacts\/([^/]+)$/.exec(url.pathname);
      if (method === "PATCH" && contact) {
        if (!created.has(contact[1]!)) return send(404, { error: "not found" });
        patched.add(contact[1]!);
        const phone = String(body.phone ?? "");
        const wait = /^1+!$/.test(phone) ? 2 ** (phone.length - 22) : 0;
        return setTimeout(() => send(400, { error: "phone must be a phone number" }), wait);
      }
      if (method === "GET" && url.pathname === "/api/invoices")
        return send(200, [{ id: 7, email: "someone@example.org" }]);
      if (method === "PUT" && url.pathname.startsWith("/api/invoices/")) invoiceWrites += 1;
      send(404, { error: "not found" });
    });
    updatesUrl = updates.url;
  });
  afterAll(() => updates.close());

  function updatesContext() {
    const object = (properties: Record<string, unknown>) => ({ type: "object", properties });
    const item = { name: "id", in: "path", required: true, schema: { type: "string" } };
    const jsonBody = (schema: unknown) => ({ content: { "application/json": { schema } } });
    const document = {
      openapi: "3.0.3",
      info: { title: "contacts", version: "1" },
      paths: {
        "/api/contacts": {
          post: {
            requestBody: jsonBody(object({ name: { type: "string" } })),
            responses: { "201": { description: "created" } },
          },
        },
        "/api/contacts/{id}": {
          patch: {
            parameters: [item],
            requestBody: jsonBody(object({ phone: { type: "string" } })),
            responses: { "200": { description: "ok" }, "400": { description: "invalid" } },
          },
        },
        "/api/invoices": { get: { responses: { "200": { description: "the invoices" } } } },
        "/api/invoices/{id}": {
          put: {
            parameters: [item],
            requestBody: jsonBody(object({ email: { type: "string" } })),
            responses: { "200": { description: "ok" } },
          },
        },
      },
    };
    const map = systemMapFor({ target: "contacts", baseUrl: updatesUrl, document });
    const profile = profileFor({
      name: "contacts",
      source: {},
      environment: { mode: "external", base_url: updatesUrl, allow_writes: true },
    });
    return probeContext({ profile, map, agent: "LOAD" });
  }

  it("times the update of a record it created, with digits for a phone, and leaves other records alone", async () => {
    const context = updatesContext();
    const outcome = await probeRedos(context, {});
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["PATCH /api/contacts/{id}"]);
    const fields = outcome.stats.fields as Array<{ field: string; result: string }>;
    expect(Object.fromEntries(fields.map((entry) => [entry.field, entry.result]))).toEqual({
      "PATCH /api/contacts/{id} body phone": "redos",
      "PUT /api/invoices/{id} body email": "left alone: no record of the probe's own to change",
    });
    expect(invoiceWrites).toBe(0);
    expect([...patched].every((id) => created.has(id))).toBe(true);
    // The generated test creates its own contact first, then fails on the backtracking update.
    const uri = outcome.candidates[0]!.evidence.find((item) => item.kind === "failing_test")?.uri ?? "";
    const file = path.join(context.artifactsDir, uri.replace(/^artifact:\/\/[^/]+\//, ""));
    const before = created.size;
    const replay = await promisify(execFile)(process.execPath, ["--test", file], {
      env: { ...process.env, QAAS_BASE_URL: updatesUrl },
    }).then(
      () => "passed",
      (error: { stdout?: string }) => error.stdout ?? "failed",
    );
    expect(replay).toMatch(/must check \d+ characters of phone in about the time of \d+/);
    expect(created.size).toBeGreaterThan(before);
  }, 60_000);
});

// An account's own settings (`PUT /users/{username}/email`): the probe registers an account through the
// application's sign-up and changes only that account's email; the seeded account is never written to.
describe("probe_redos on an account's own settings", () => {
  let accounts: Awaited<ReturnType<typeof jsonServer>>;
  let accountsUrl: string;
  const passwords = new Map<string, string>([["seeded", "Seeded-Pa55word!"]]);
  const emailWrites: string[] = [];

  beforeAll(async () => {
    accounts = await jsonServer(({ method, url, body, headers }, send) => {
      if (method === "POST" && url.pathname === "/api/register") {
        if (!body.username || !body.password || passwords.has(body.username)) return send(400, {});
        passwords.set(body.username, body.password);
        return send(201, { username: body.username });
      }
      if (method === "POST" && url.pathname === "/api/login") {
        if (passwords.get(body.username ?? "") !== body.password) return send(401, {});
        return send(200, { auth_token: `token-${body.username}` });
      }
      const email = /^\/api\/users\/([^/]+)\/email$/.exec(url.pathname);
      if (method === "PUT" && email) {
        const name = decodeURIComponent(email[1]!);
        if (headers.authorization !== `Bearer token-${name}`) return send(403, {});
        emailWrites.push(name);
        const value = String(body.email ?? "");
        return setTimeout(() => send(400, { error: "not an email" }), backtracking(value));
      }
      send(404, {});
    });
    accountsUrl = accounts.url;
  });
  afterAll(() => accounts.close());

  it("registers an account of its own and times that account's email change", async () => {
    const object = (properties: Record<string, unknown>) => ({
      content: {
        "application/json": {
          schema: {
            type: "object",
            properties: Object.fromEntries(Object.keys(properties).map((key) => [key, { type: "string" }])),
          },
        },
      },
    });
    const document = {
      openapi: "3.0.3",
      info: { title: "accounts", version: "1" },
      paths: {
        "/api/register": {
          post: {
            requestBody: object({ username: 1, password: 1, email: 1 }),
            responses: { "201": { description: "registered" } },
          },
        },
        "/api/login": {
          post: {
            requestBody: object({ username: 1, password: 1 }),
            responses: { "200": { description: "signed in" } },
          },
        },
        "/api/users/{username}/email": {
          put: {
            parameters: [{ name: "username", in: "path", required: true, schema: { type: "string" } }],
            requestBody: object({ email: 1 }),
            responses: { "204": { description: "changed" }, "400": { description: "invalid" } },
          },
        },
      },
    };
    const map = systemMapFor({ target: "accounts", baseUrl: accountsUrl, document });
    const profile = profileFor({
      name: "accounts",
      source: {},
      environment: { mode: "external", base_url: accountsUrl, allow_writes: true },
    });
    const outcome = await probeRedos(probeContext({ profile, map, agent: "LOAD" }), {
      operation: "PUT /api/users/{username}/email",
    });
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual([
      "PUT /api/users/{username}/email",
    ]);
    expect(outcome.stats.fields).toEqual([expect.objectContaining({ result: "redos" })]);
    const registered = [...passwords.keys()].filter((name) => name !== "seeded");
    expect(registered).toHaveLength(1);
    expect(new Set(emailWrites)).toEqual(new Set(registered));
    expect(outcome.candidates[0]!.summary).toContain(`registered for the purpose (${registered[0]})`);
  }, 60_000);
});
