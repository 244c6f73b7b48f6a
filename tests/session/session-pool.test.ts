import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Semaphore } from "../../src/probes/http/concurrency.ts";
import { HttpClient, RequestBudget } from "../../src/probes/http/http-client.ts";
import { SessionPool } from "../../src/probes/session/session-pool.ts";
import { SignInError } from "../../src/probes/session/sign-in.ts";
import type { AuthServer } from "../fixtures/auth-server.ts";
import { startAuthServer } from "../fixtures/auth-server.ts";
import { profileFor } from "../fixtures/probe-harness.ts";

let server: AuthServer;

beforeAll(async () => {
  server = await startAuthServer();
  process.env.SESSION_ALICE_PW = "alice-pw";
  process.env.SESSION_BOB_PW = "bob-pw";
  process.env.SESSION_ALICE_TOKEN = "static-alice-token";
  process.env.SESSION_BOB_KEY = "key-bob-123";
  process.env.SESSION_WRONG_PW = "not-it";
});
afterAll(async () => {
  await server.close();
});

function client(): HttpClient {
  return new HttpClient({ limiter: new Semaphore(4), budget: new RequestBudget(200), writesAllowed: false });
}

function pool(
  login: Record<string, unknown> | undefined,
  users: Array<Record<string, unknown>>,
  now?: () => number,
): SessionPool {
  const profile = profileFor({
    name: "auth",
    source: {},
    environment: { mode: "external", base_url: server.baseUrl },
    ...(login ? { auth: { login } } : {}),
    users,
  });
  return new SessionPool(profile, server.baseUrl, now);
}

const alice = { name: "alice", role: "member", password: "secret_ref:SESSION_ALICE_PW" };
const bob = { name: "bob", role: "member", password: "secret_ref:SESSION_BOB_PW" };

async function whoami(
  sessions: SessionPool,
  user: string,
  http = client(),
): Promise<{ status: number; user?: string }> {
  const exchange = await sessions.send(http, user, { method: "GET", url: `${server.baseUrl}/whoami` });
  return {
    status: exchange.response?.status ?? 0,
    user: (exchange.response?.json as { user?: string } | undefined)?.user,
  };
}

describe("session layer", () => {
  it("signs in with a JSON login, takes the token from a nested body path, and keeps one session per user", async () => {
    const sessions = pool(
      {
        kind: "json",
        endpoint: "POST /login-json",
        body: { user: "{username}", pass: "{password}" },
        token_from: "body:data.accessToken",
      },
      [alice, bob],
    );
    const http = client();
    // The sign-in POST is exempt from the external no-writes rule: it changes no data.
    expect(
      await Promise.all([
        whoami(sessions, "alice", http),
        whoami(sessions, "bob", http),
        whoami(sessions, "alice", http),
      ]),
    ).toEqual([
      { status: 200, user: "alice" },
      { status: 200, user: "bob" },
      { status: 200, user: "alice" },
    ]);
    expect(sessions.summaries().map((summary) => [summary.user, summary.sign_ins])).toEqual([
      ["alice", 1],
      ["bob", 1],
    ]);
    expect(http.stats.skipped_writes).toBe(0);
  });

  it("signs in with a form login and sends the session cookie (with the other cookies set at sign-in)", async () => {
    const sessions = pool(
      { kind: "form", endpoint: "POST /login-form", token_from: "cookie:sid", apply_as: "cookie:sid" },
      [alice],
    );
    const http = client();
    const exchange = await sessions.send(http, "alice", { method: "GET", url: `${server.baseUrl}/whoami` });
    expect(exchange.response?.json).toEqual({ user: "alice" });
    expect(exchange.request.headers.cookie?.split("; ").sort()).toEqual([
      expect.stringMatching(/^sid=[0-9a-f]+$/),
      "theme=dark",
    ]);
  });

  it("takes the token from a response header", async () => {
    const sessions = pool(
      { kind: "json", endpoint: "POST /login-header", token_from: "header:X-Auth-Token" },
      [bob],
    );
    expect(await whoami(sessions, "bob")).toEqual({ status: 200, user: "bob" });
  });

  it("uses a static bearer token and an API key from secret_ref without any sign-in request", async () => {
    const bearer = pool({ kind: "bearer" }, [
      { name: "alice", role: "member", token: "secret_ref:SESSION_ALICE_TOKEN" },
    ]);
    const apiKey = pool({ kind: "api_key", apply_as: "header:X-Api-Key" }, [
      { name: "bob", role: "member", token: "secret_ref:SESSION_BOB_KEY" },
    ]);
    const http = client();
    expect(await whoami(bearer, "alice", http)).toEqual({ status: 200, user: "alice" });
    expect(await whoami(apiKey, "bob", http)).toEqual({ status: 200, user: "bob" });
    expect(http.stats.sent).toBe(2);
  });

  it("signs in again once when a request answers 401 mid-run, sharing one re-login between concurrent requests", async () => {
    const sessions = pool(
      {
        kind: "json",
        endpoint: "POST /login-json",
        body: { user: "{username}", pass: "{password}" },
        token_from: "body:data.accessToken",
      },
      [alice],
    );
    const http = client();
    expect((await whoami(sessions, "alice", http)).status).toBe(200);
    const before = server.logins.get("alice") ?? 0;
    server.expireAll();
    const answers = await Promise.all([
      whoami(sessions, "alice", http),
      whoami(sessions, "alice", http),
      whoami(sessions, "alice", http),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect((server.logins.get("alice") ?? 0) - before).toBe(1);
  });

  it("signs in again before the declared TTL runs out", async () => {
    let now = 1_000_000;
    const sessions = pool(
      {
        kind: "json",
        endpoint: "POST /login-json",
        body: { user: "{username}", pass: "{password}" },
        token_from: "body:data.accessToken",
        ttl_seconds: 60,
      },
      [bob],
      () => now,
    );
    const http = client();
    await whoami(sessions, "bob", http);
    now += 30_000;
    await whoami(sessions, "bob", http);
    expect(sessions.summaries()[0]?.sign_ins).toBe(1);
    now += 31_000;
    expect(await whoami(sessions, "bob", http)).toEqual({ status: 200, user: "bob" });
    expect(sessions.summaries()[0]?.sign_ins).toBe(2);
  });

  it("names the user and the failing step in every sign-in error", async () => {
    const http = client();
    const missingSecret = pool(
      { kind: "json", endpoint: "POST /login-json", token_from: "body:data.accessToken" },
      [{ name: "carol", role: "member", password: "secret_ref:SESSION_UNSET_PW" }],
    );
    await expect(missingSecret.signIn("carol", http)).rejects.toThrow(
      /user "carol" failed at step "secret".*SESSION_UNSET_PW/,
    );
    const wrongPassword = pool(
      { kind: "json", endpoint: "POST /login-json", body: { user: "{username}", pass: "{password}" } },
      [{ name: "alice", role: "member", password: "secret_ref:SESSION_WRONG_PW" }],
    );
    await expect(wrongPassword.signIn("alice", http)).rejects.toThrow(
      /user "alice" failed at step "request".*answered 401/,
    );
    const wrongPath = pool(
      {
        kind: "json",
        endpoint: "POST /login-json",
        body: { user: "{username}", pass: "{password}" },
        token_from: "body:token",
      },
      [alice],
    );
    const error = await wrongPath.signIn("alice", http).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SignInError);
    expect((error as SignInError).step).toBe("token");
    expect((error as SignInError).message).toMatch(/no token at body:token/);
    const noEndpoint = pool({ kind: "form" }, [alice]);
    await expect(noEndpoint.signIn("alice", http)).rejects.toThrow(/step "recipe".*METHOD \/path/);
    expect(() => noEndpoint.user("zed")).toThrow(/no user "zed".*alice/);
  });

  it("never writes a credential into a masked record", async () => {
    const sessions = pool(
      {
        kind: "json",
        endpoint: "POST /login-json",
        body: { user: "{username}", pass: "{password}" },
        token_from: "body:data.accessToken",
      },
      [alice],
    );
    const exchange = await sessions.send(client(), "alice", {
      method: "GET",
      url: `${server.baseUrl}/whoami`,
    });
    const token = exchange.request.headers.authorization!.replace("Bearer ", "");
    const masked = JSON.stringify(sessions.masker.maskHeaders(exchange.request.headers));
    expect(masked).not.toContain(token);
    expect(sessions.masker.maskText(`token=${token}`)).not.toContain(token);
  });
});
