import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maskedExchange } from "../../src/probes/http/exchange-record.ts";
import { openProbeRun, usableUsers } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
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

const formAuth = (signup: Record<string, unknown>) => ({
  login: { kind: "form", endpoint: "POST /session" },
  signup: { endpoint: "POST /register", kind: "form", allowed: true, role: "member", ...signup },
});

describe("throw-away users", () => {
  it("registers a peer through the sign-up form, signs it in, and never records its password", async () => {
    const pool = poolFor(app.baseUrl, formAuth({}), [ALICE]);
    const http = client();
    const peer = await pool.peerOf("alice", http);
    expect(peer?.role).toBe("member");
    expect(peer?.username).toMatch(/^qaas[0-9a-f]{8}$/);
    const password = app.accounts.get(peer!.username!)?.password ?? "";
    expect(password.length).toBeGreaterThanOrEqual(16);
    const dashboard = await pool.send(http, peer!.name, { method: "GET", url: `${app.baseUrl}/dashboard` });
    expect(dashboard.response?.body).toContain(`Hello ${peer!.username}`);
    expect(pool.users().map((user) => user.name)).toEqual(["alice"]);
    expect(pool.throwawayUsers()).toEqual([peer]);
    expect(pool.summaries().find((summary) => summary.user === peer!.name)?.throwaway).toBe(true);
    // The second peer request reuses the one already made.
    expect(await pool.peerOf("alice", http)).toBe(peer);
    const credential = await pool.signIn(peer!.name, http);
    const recorded = JSON.stringify(
      (credential.chain ?? []).map((exchange) => maskedExchange(exchange, pool.masker)),
    );
    expect(recorded).not.toContain(password);
    expect(pool.masker.maskText(`password is ${password}`)).not.toContain(password);
  });

  it("prefers a profile user of the same role, and stops at the per-run limit", async () => {
    const pool = poolFor(app.baseUrl, formAuth({ max_users: 1 }), [ALICE, BOB]);
    const http = client();
    expect((await pool.peerOf("alice", http))?.name).toBe("bob");
    await pool.throwawayUser(http);
    await expect(pool.throwawayUser(http)).rejects.toThrow(/already tried 1 throw-away users.*max_users: 1/);
    // A profile peer who cannot sign in is passed over for a throw-away user.
    const locked = poolFor(app.baseUrl, formAuth({}), [
      ALICE,
      { ...BOB, password: "secret_ref:BROWSER_WRONG_PW" },
    ]);
    expect((await locked.peerOf("alice", http))?.name).toMatch(/^throwaway-/);
  });

  it("refuses without allowed: true, and for a role the sign-up does not create", async () => {
    const http = client();
    await expect(
      poolFor(app.baseUrl, formAuth({ allowed: false }), [ALICE]).throwawayUser(http),
    ).rejects.toThrow(/allowed: false/);
    await expect(
      poolFor(app.baseUrl, { login: { kind: "form", endpoint: "POST /session" } }, [ALICE]).throwawayUser(
        http,
      ),
    ).rejects.toThrow(/no auth.signup/);
    await expect(poolFor(app.baseUrl, formAuth({}), [ALICE]).throwawayUser(http, "admin")).rejects.toThrow(
      /registers "member" users, not "admin"/,
    );
    expect(http.stats.sent).toBe(0);
  });

  it("names the step when the application turns the sign-up down", async () => {
    const pool = poolFor(app.baseUrl, formAuth({ body: { username: "{username}", password: "short" } }), [
      ALICE,
    ]);
    await expect(pool.throwawayUser(client())).rejects.toThrow(
      /failed at step "signup": POST \/register answered with the sign-up form again \("Invalid registration"\)/,
    );
  });

  it("registers through a JSON sign-up and signs in with the JSON recipe", async () => {
    const pool = poolFor(
      app.baseUrl,
      {
        login: {
          kind: "json",
          endpoint: "POST /api/v1/auth",
          body: { login: "{username}", secret: "{password}" },
        },
        signup: { endpoint: "POST /api/v1/users", kind: "json", allowed: true },
      },
      [{ ...ALICE, role: "user" }],
    );
    const http = client();
    const user = await pool.throwawayUser(http, "user");
    const me = await pool.send(http, user.name, { method: "GET", url: `${app.baseUrl}/api/v1/me` });
    expect(me.response?.json).toEqual({ user: user.username });
  });

  it("gives a lone role a throw-away second user in usableUsers when asked", async () => {
    const profile = profileFor({
      name: "peers",
      source: {},
      environment: { mode: "managed", base_url: app.baseUrl },
      auth: formAuth({}),
      users: [ALICE, { name: "root", role: "admin", username: "bob", password: "secret_ref:BROWSER_BOB_PW" }],
    });
    const context = probeContext({
      profile,
      map: systemMapFor({ target: "peers", baseUrl: app.baseUrl, document: { openapi: "3.0.3", paths: {} } }),
    });
    const run = openProbeRun(context, "test");
    if (typeof run === "string") throw new Error(run);
    expect((await usableUsers(run)).map((user) => user.name)).toEqual(["alice", "root"]);
    const withPeers = await usableUsers(run, { peers: true });
    expect(withPeers.map((user) => user.role)).toEqual(["member", "member", "admin"]);
    expect(withPeers.filter((user) => user.name.startsWith("throwaway-"))).toHaveLength(1);
  });
});
