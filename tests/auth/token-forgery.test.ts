import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { checkTokenForgery } from "../../src/probes/auth/check-token-forgery.ts";
import { parseJwt, signHmac } from "../../src/probes/auth/jwt.ts";
import { withLiveTiming } from "../../src/probes/auth/token-forgery.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, undocumented, undocumentedMap } from "../fixtures/probe-harness.ts";

// A service that reads the caller from its bearer token without verifying the signature. Its profile
// read is answered at once; its forecast takes seconds, so every forgery sent there would stall a
// single-threaded service for everyone: the check judges the fast read and leaves the slow one alone.

const SECRET = randomBytes(32).toString("hex");
const PEOPLE: Record<string, { id: number; email: string; plan: string }> = {
  ann: { id: 11, email: "ann.carter@fixture.test", plan: "team-basic-2291" },
  bob: { id: 12, email: "bob.dalton@fixture.test", plan: "team-gold-7730" },
};

let server: http.Server;
let baseUrl: string;
const forecastCalls: string[] = [];

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    const json = (status: number, body: unknown) =>
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    let text = "";
    for await (const chunk of request) text += chunk;
    if (request.method === "POST" && request.url === "/auth/login") {
      const { username } = JSON.parse(text || "{}") as { username?: string };
      if (!username || !PEOPLE[username]) return json(401, { error: "bad credentials" });
      const now = Math.floor(Date.now() / 1000);
      return json(200, {
        token: signHmac({ alg: "HS256" }, { sub: username, iat: now, exp: now + 3600 }, SECRET),
      });
    }
    // The flaw: the payload is trusted, the signature never checked.
    const caller = parseJwt(request.headers.authorization?.replace(/^Bearer /, ""))?.payload.sub;
    const person = typeof caller === "string" ? PEOPLE[caller] : undefined;
    if (!person) return json(401, { error: "authentication required" });
    if (request.url === "/api/me") return json(200, person);
    if (request.url === "/api/forecast") {
      forecastCalls.push(String(caller));
      await new Promise((resolve) => setTimeout(resolve, 1800));
      return json(200, { owner: person.email, plan: person.plan, projected: 4817 });
    }
    return json(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.FORGERY_TEST_PW = "irrelevant-pw";
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the token-forgery check", () => {
  it("finds forged tokens accepted on a read, and sends no forgery to a read that takes seconds", async () => {
    const login: Operation = {
      ...undocumented("POST", "/auth/login"),
      request_body: {
        content_type: "application/json",
        required: true,
        schema: {
          type: "object",
          properties: { username: { type: "string" }, password: { type: "string" } },
        },
      },
    };
    const reads = [undocumented("GET", "/api/forecast"), undocumented("GET", "/api/me")];
    const profile = profileFor({
      name: "forgery-fixture",
      source: {},
      environment: { mode: "managed", base_url: baseUrl },
      auth: {
        login: {
          kind: "json",
          endpoint: "POST /auth/login",
          body: { username: "{username}", password: "{password}" },
          token_from: "body:token",
        },
      },
      users: ["ann", "bob"].map((name) => ({
        name,
        role: "member",
        username: name,
        password: "secret_ref:FORGERY_TEST_PW",
      })),
    });
    const map = undocumentedMap("forgery-fixture", baseUrl, [login, ...reads]);
    const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_authentication");
    if (typeof run === "string") throw new Error(run);
    const { candidates, stats } = await checkTokenForgery(run, run.sessions.users(), reads);
    expect(stats.session_tokens).toBe("jwt");
    expect(candidates.map((candidate) => candidate.location.value)).toEqual(["GET /api/me"]);
    // The owner's one read showed the forecast slow; nothing forged followed it.
    expect(forecastCalls).toHaveLength(1);
  }, 60_000);
});

describe("a forgery's timing claims", () => {
  const now = 1_800_000_000;
  it("are moved to now when the token they copy has expired or is about to, keeping its lifetime", () => {
    expect(withLiveTiming({ sub: "ann", iat: now - 100, exp: now - 40 }, now)).toEqual({
      sub: "ann",
      iat: now,
      exp: now + 60,
    });
    expect(withLiveTiming({ sub: "ann", nbf: now - 900, exp: now + 5 }, now)).toEqual({
      sub: "ann",
      nbf: now,
      exp: now + 300,
    });
  });

  it("are kept while the token still has time, or says nothing of expiry", () => {
    const live = { sub: "ann", iat: now - 10, exp: now + 3590 };
    expect(withLiveTiming(live, now)).toBe(live);
    const endless = { sub: "ann", iat: now - 10 };
    expect(withLiveTiming(endless, now)).toBe(endless);
  });
});
