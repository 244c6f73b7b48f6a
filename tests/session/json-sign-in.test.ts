import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maskedExchange } from "../../src/probes/http/exchange-record.ts";
import { SignInError } from "../../src/probes/session/sign-in.ts";
import { findToken } from "../../src/probes/session/token-search.ts";
import type { BrowserApp } from "./browser-app.ts";
import { startBrowserApp } from "./browser-app.ts";
import { ALICE, BOB, client, poolFor, setPasswords } from "./session-support.ts";

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp();
  setPasswords();
});
afterAll(async () => {
  await app.close();
});

const nestedToken = {
  login: { kind: "json", endpoint: "POST /api/v1/auth", body: { login: "{username}", secret: "{password}" } },
};
const cookieApi = (page?: string) => ({
  login: {
    kind: "json",
    endpoint: "POST /spa/login",
    ...(page ? { page } : {}),
    body: { email: "{username}", password: "{password}" },
  },
});
const SPA_ALICE = { ...ALICE, username: "alice@example.com" };

describe("JSON sign-in", () => {
  it("finds a token nested at any depth without token_from, never the refresh token", async () => {
    const pool = poolFor(app.baseUrl, nestedToken, [ALICE, BOB]);
    const http = client();
    const credential = await pool.signIn("alice", http);
    expect(credential.token?.split(".")).toHaveLength(3);
    const answer = credential.exchange?.response?.json as { data: { session: { jwt: string } } };
    expect(credential.token).toBe(answer.data.session.jwt);
    expect(credential.expiresAt).toBeGreaterThan(Date.now());
    const me = await pool.send(http, "bob", { method: "GET", url: `${app.baseUrl}/api/v1/me` });
    expect(me.response?.json).toEqual({ user: "bob" });
    const recorded = JSON.stringify(maskedExchange(credential.exchange!, pool.masker));
    expect(recorded).not.toContain(credential.token);
    expect(recorded).not.toContain("alice-password");
  });

  it("reads a 200 answer that says the sign-in failed as a failure", async () => {
    const pool = poolFor(app.baseUrl, nestedToken, [{ ...ALICE, password: "secret_ref:BROWSER_WRONG_PW" }]);
    const error = await pool.signIn("alice", client()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SignInError);
    expect((error as SignInError).message).toMatch(
      /user "alice" failed at step "verify": POST \/api\/v1\/auth answered 200 but says the sign-in failed \("invalid credentials"\)/,
    );
  });

  it("signs in to a cookie-authenticated API with its XSRF cookie echoed, and keeps echoing it on writes", async () => {
    const pool = poolFor(app.baseUrl, cookieApi("/spa/csrf"), [SPA_ALICE]);
    const http = client();
    const credential = await pool.signIn("alice", http);
    expect(credential.token).toBeUndefined();
    expect(Object.keys(credential.cookies).sort()).toEqual(["XSRF-TOKEN", "spa_session"]);
    const me = await pool.send(http, "alice", { method: "GET", url: `${app.baseUrl}/spa/me` });
    expect(me.response?.json).toEqual({ user: "alice" });
    const write = await pool.send(http, "alice", {
      method: "POST",
      url: `${app.baseUrl}/spa/items`,
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(write.response?.status).toBe(201);
    // The login rotated the XSRF cookie: the header carries the new one, decoded as scripts decode it.
    expect(write.request.headers["x-xsrf-token"]).toBe(decodeURIComponent(credential.cookies["XSRF-TOKEN"]!));
  });

  it("recovers from a CSRF refusal of the sign-in itself when no page is declared", async () => {
    const pool = poolFor(app.baseUrl, cookieApi(), [SPA_ALICE]);
    const credential = await pool.signIn("alice", client());
    expect(
      credential.chain?.map((exchange) => `${exchange.request.method} ${exchange.response?.status}`),
    ).toEqual(["POST 419", "GET 404", "POST 200"]);
    expect(credential.chain?.[2]?.request.headers["x-xsrf-token"]).toBeDefined();
  });

  it("signs in again when the cookie session ends with a 401", async () => {
    const pool = poolFor(app.baseUrl, cookieApi("/spa/csrf"), [SPA_ALICE]);
    const http = client();
    await pool.signIn("alice", http);
    const before = app.logins.get("alice") ?? 0;
    app.expireAll();
    const me = await pool.send(http, "alice", { method: "GET", url: `${app.baseUrl}/spa/me` });
    expect(me.response?.status).toBe(200);
    expect((app.logins.get("alice") ?? 0) - before).toBe(1);
  });
});

describe("token search", () => {
  it("prefers the shallowest token-like key, skips refresh and CSRF tokens, and falls back to a JWT shape", () => {
    expect(findToken({ data: { refresh_token: "r".repeat(20), session: { jwt: "j".repeat(20) } } })).toEqual({
      token: "j".repeat(20),
      path: "data.session.jwt",
    });
    expect(findToken({ token: "t".repeat(12), user: { access_token: "a".repeat(12) } })?.path).toBe("token");
    expect(findToken({ csrfToken: "c".repeat(20), result: { bearerToken: "b".repeat(20) } })?.path).toBe(
      "result.bearerToken",
    );
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2ln";
    expect(findToken({ payload: [{ value: jwt }] })).toEqual({ token: jwt, path: "payload.0.value" });
    expect(findToken({ message: "ok", user: { id: 3 } })).toBeUndefined();
  });
});
