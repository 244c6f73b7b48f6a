import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maskedExchange } from "../../src/probes/http/exchange-record.ts";
import { SignInError } from "../../src/probes/session/sign-in.ts";
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

const formLogin = { login: { kind: "form", endpoint: "POST /session" } };

async function page(pool: ReturnType<typeof poolFor>, user: string, path: string, http = client()) {
  const exchange = await pool.send(http, user, { method: "GET", url: `${app.baseUrl}${path}` });
  return { status: exchange.response?.status ?? 0, body: exchange.response?.body ?? "", exchange };
}

describe("form sign-in", () => {
  it("loads the sign-in page, posts its CSRF token with the credentials, follows the redirect and keeps the cookies", async () => {
    const pool = poolFor(app.baseUrl, formLogin, [ALICE]);
    const http = client();
    const credential = await pool.signIn("alice", http);
    expect(credential.token).toBeUndefined();
    expect(Object.keys(credential.cookies).sort()).toEqual(["_app_session", "flash"]);
    // The endpoint's own path is tried first (404 here), then /login, which shows the form.
    expect(
      credential.chain?.map(
        (exchange) => `${exchange.request.method} ${new URL(exchange.request.url).pathname}`,
      ),
    ).toEqual(["GET /session", "GET /login", "POST /session", "GET /dashboard"]);
    const posted = new URLSearchParams(credential.exchange?.request.body);
    expect(posted.get("user[login]")).toBe("alice");
    expect(posted.get("commit")).toBe("Sign in");
    expect(posted.get("authenticity_token")).toMatch(/.{16,}/);
    expect(posted.has("remember_me")).toBe(false);
    const after = await page(pool, "alice", "/dashboard", http);
    expect(after.body).toContain("Hello alice");
    // A later sign-in (another user) goes straight to the page where the form was found.
    const both = poolFor(app.baseUrl, formLogin, [ALICE, BOB]);
    await both.signIn("alice", http);
    expect((await both.signIn("bob", http)).chain?.[0]?.request.url).toBe(`${app.baseUrl}/login`);
  });

  it("follows the session cookie as the application rotates it on every page", async () => {
    const pool = poolFor(app.baseUrl, formLogin, [ALICE]);
    const http = client();
    const before = app.logins.get("alice") ?? 0;
    const cookies: string[] = [];
    for (let index = 0; index < 4; index += 1) {
      const answer = await page(pool, "alice", "/dashboard", http);
      expect(answer.body).toContain("Hello alice");
      cookies.push(answer.exchange.request.headers.cookie ?? "");
    }
    expect(new Set(cookies).size).toBe(4);
    expect((app.logins.get("alice") ?? 0) - before).toBe(1);
  });

  it("signs in again when the session ends into a redirect to /login or into the sign-in form itself", async () => {
    const pool = poolFor(app.baseUrl, formLogin, [ALICE]);
    const http = client();
    expect((await page(pool, "alice", "/profile", http)).body).toContain("profile of alice");
    const before = app.logins.get("alice") ?? 0;
    app.expireAll();
    expect((await page(pool, "alice", "/dashboard", http)).body).toContain("Hello alice");
    expect((app.logins.get("alice") ?? 0) - before).toBe(1);
    app.expireAll();
    // The expired page answers 200 with the sign-in form: concurrent requests share one re-sign-in.
    const answers = await Promise.all([1, 2, 3].map(() => page(pool, "alice", "/profile", http)));
    expect(answers.map((answer) => answer.body.includes("profile of alice"))).toEqual([true, true, true]);
    expect((app.logins.get("alice") ?? 0) - before).toBe(2);
    expect(pool.summaries()[0]?.sign_ins).toBe(3);
  });

  it("adds the page's CSRF token to a signed-in script request, as the application's scripts do", async () => {
    const pool = poolFor(app.baseUrl, formLogin, [ALICE]);
    const exchange = await pool.send(client(), "alice", {
      method: "POST",
      url: `${app.baseUrl}/api/notes`,
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(exchange.response?.status).toBe(201);
    expect(exchange.request.headers["x-csrf-token"]).toBeDefined();
    const withoutCsrf = await pool.send(
      client(),
      "alice",
      { method: "POST", url: `${app.baseUrl}/api/notes`, body: "{}" },
      { csrf: false },
    );
    expect(withoutCsrf.response?.status).toBe(403);
  });

  it("signs in from the page alone, posting to wherever its form points", async () => {
    const pool = poolFor(app.baseUrl, { login: { kind: "form", page: "/login" } }, [BOB]);
    expect((await page(pool, "bob", "/dashboard")).body).toContain("Hello bob");
  });

  it("fails a sign-in that lands back on the sign-in page, quoting the application and naming user and step", async () => {
    const pool = poolFor(app.baseUrl, formLogin, [{ ...ALICE, password: "secret_ref:BROWSER_WRONG_PW" }]);
    const error = await pool.signIn("alice", client()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SignInError);
    expect((error as SignInError).step).toBe("verify");
    expect((error as SignInError).message).toMatch(
      /user "alice" failed at step "verify": POST \/session sent the browser back to the sign-in page \/login \("Invalid login or password"\)/,
    );
    const noForm = poolFor(app.baseUrl, { login: { kind: "form", page: "/nowhere" } }, [ALICE]);
    await expect(noForm.signIn("alice", client())).rejects.toThrow(
      /user "alice" failed at step "page": no sign-in form .* on \/nowhere; set auth.login.page/,
    );
    const noRecipe = poolFor(app.baseUrl, { login: { kind: "form" } }, [ALICE]);
    await expect(noRecipe.signIn("alice", client())).rejects.toThrow(/step "recipe".*auth\.login\.page/);
  });

  it("never shows the password, the session cookie or the CSRF token in a recorded exchange", async () => {
    const pool = poolFor(app.baseUrl, formLogin, [ALICE]);
    const http = client();
    const credential = await pool.signIn("alice", http);
    const answer = await page(pool, "alice", "/dashboard", http);
    const recorded = JSON.stringify([
      ...(credential.chain ?? []).map((exchange) => maskedExchange(exchange, pool.masker)),
      maskedExchange(answer.exchange, pool.masker),
    ]);
    expect(recorded).not.toContain("alice-password");
    const posted = new URLSearchParams(credential.exchange?.request.body);
    expect(recorded).not.toContain(posted.get("authenticity_token"));
    for (const value of Object.values(credential.cookies).filter((value) => value.length > 8)) {
      expect(recorded).not.toContain(value);
    }
    expect(recorded).toContain("Hello alice");
  });
});
