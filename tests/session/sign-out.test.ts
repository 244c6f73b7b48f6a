import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignOutRefusedError, WriteNotAllowedError } from "../../src/probes/http/http-client.ts";
import { openHttpClient } from "../../src/probes/http/run-http.ts";
import { signOutReason } from "../../src/probes/http/sign-out.ts";
import { openProbeRun, send } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import type { BrowserApp } from "./browser-app.ts";
import { startBrowserApp } from "./browser-app.ts";
import { ALICE, client, poolFor, setPasswords } from "./session-support.ts";

let app: BrowserApp;

beforeAll(async () => {
  app = await startBrowserApp();
  setPasswords();
});
afterAll(async () => {
  await app.close();
});

describe("sign-out guard", () => {
  it("recognises sign-out routes across frameworks, and leaves look-alikes alone", () => {
    const signsOut = [
      ["GET", "/logout"],
      ["POST", "/api/auth/logout"],
      ["DELETE", "/users/sign_out"],
      ["GET", "/account/log-out"],
      ["GET", "/signout.php"],
      ["POST", "/logoff"],
      ["GET", "/oidc/end_session"],
      ["DELETE", "/api/session"],
      ["DELETE", "/sessions/17"],
      ["DELETE", "/api/auth/token"],
    ];
    for (const [method, path] of signsOut) {
      expect(signOutReason(method!, `http://x${path}`), `${method} ${path}`).toBeDefined();
    }
    const harmless = [
      ["GET", "/blog/logout-tips"],
      ["POST", "/login"],
      ["GET", "/sessions"],
      ["POST", "/api/sessions"],
      ["DELETE", "/items/3"],
      ["GET", "/search?q=logout"],
      ["POST", "/documents/4/approve"],
    ];
    for (const [method, path] of harmless) {
      expect(signOutReason(method!, `http://x${path}`), `${method} ${path}`).toBeUndefined();
    }
  });

  it("refuses a probe's request to the logout link as 'not sent', and the session lives on", async () => {
    const pool = poolFor(app.baseUrl, { login: { kind: "form", endpoint: "POST /session" } }, [ALICE]);
    const http = client();
    await pool.signIn("alice", http);
    const logins = app.logins.get("alice") ?? 0;
    const refused = await pool
      .send(http, "alice", { method: "GET", url: `${app.baseUrl}/logout` })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SignOutRefusedError);
    expect(refused).toBeInstanceOf(WriteNotAllowedError);
    expect((refused as Error).message).toMatch(/GET \/logout refused: .*auth\.allow_sign_out/);
    expect(http.stats).toMatchObject({ refused_sign_outs: 1, skipped_writes: 1 });
    expect(app.seen).not.toContain("GET /logout");
    const after = await pool.send(http, "alice", { method: "GET", url: `${app.baseUrl}/dashboard` });
    expect(after.response?.body).toContain("Hello alice");
    expect(app.logins.get("alice")).toBe(logins);
  });

  it("lets through a sign-out the profile names as harmless, and probe sends answer undefined for the rest", async () => {
    const profile = profileFor({
      name: "guarded",
      source: {},
      environment: { mode: "managed", base_url: app.baseUrl },
      auth: {
        login: { kind: "json", endpoint: "POST /api/v1/auth" },
        allow_sign_out: ["POST /api/v1/logout"],
      },
    });
    const context = probeContext({
      profile,
      map: systemMapFor({
        target: "guarded",
        baseUrl: app.baseUrl,
        document: { openapi: "3.0.3", paths: {} },
      }),
    });
    const target = { baseUrl: app.baseUrl, profile, mode: "managed" as const, writesAllowed: true };
    const http = openHttpClient(context, target);
    expect((await http.send({ method: "POST", url: `${app.baseUrl}/api/v1/logout` })).response?.status).toBe(
      204,
    );
    const run = openProbeRun(context, "test");
    if (typeof run === "string") throw new Error(run);
    expect(await send(run, undefined, { method: "POST", url: `${app.baseUrl}/logout` })).toBeUndefined();
    expect(run.client.stats.refused_sign_outs).toBe(1);
  });
});
