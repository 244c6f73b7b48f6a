import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import {
  checkSessionCookie,
  lifetimeDays,
  sessionCookieFlaws,
} from "../../src/probes/auth/session-cookie.ts";
import { openProbeRun, usableUsers } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";

// The session cookie as the sign-in sets it: flagged when scripts can read it or the browser keeps it for
// years, once a page shows the cookie alone is the session. The safe build sets it HttpOnly for the
// browser session, next to a year-long preference cookie that carries no session and is left alone.

const NOW = Date.parse("2026-12-04T12:00:00Z");

describe("a session cookie's attributes", () => {
  it("reads HttpOnly, Secure and the lifetime the way browsers do", () => {
    expect(sessionCookieFlaws("sid=1; Path=/; HttpOnly", "http://h")).toEqual([]);
    expect(sessionCookieFlaws("sid=1; Path=/", "http://h")).toEqual([
      { attribute: "HttpOnly", found: "without HttpOnly" },
    ]);
    expect(sessionCookieFlaws("sid=1; HttpOnly", "https://h").map((flaw) => flaw.attribute)).toEqual([
      "Secure",
    ]);
    // Max-Age wins over Expires; Flask's 31-day permanent session is the longest left alone.
    expect(lifetimeDays("sid=1; Expires=Thu, 01 Jan 2099 00:00:00 GMT; Max-Age=3600", NOW)).toBeCloseTo(
      1 / 24,
    );
    expect(lifetimeDays("sid=1; expires=Fri, 04 Dec 2029 12:00:00 GMT", NOW)).toBeCloseTo(1096);
    expect(lifetimeDays("sid=1; Path=/", NOW)).toBeUndefined();
    expect(sessionCookieFlaws("sid=1; HttpOnly; Max-Age=2678400", "http://h", NOW)).toEqual([]);
    expect(sessionCookieFlaws("sid=1; HttpOnly; Max-Age=99999999", "http://h", NOW)).toEqual([
      { attribute: "lifetime", found: "to last 1157 days" },
    ]);
  });
});

type Build = "loose" | "tight";

function shop(build: Build): http.Server {
  const sessions = new Set<string>();
  return http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://shop.local");
    if (url.pathname === "/login" && request.method === "GET") {
      response.writeHead(200, { "content-type": "text/html" });
      return response.end(
        '<form method="post" action="/login"><input name="username"><input type="password" name="password"></form>',
      );
    }
    if (url.pathname === "/login" && request.method === "POST") {
      let text = "";
      for await (const chunk of request) text += chunk;
      const form = new URLSearchParams(text);
      if (form.get("username") !== "dana" || form.get("password") !== "dana-pass-77") {
        response.writeHead(302, { location: "/login?error=1" });
        return response.end();
      }
      const sid = randomUUID();
      sessions.add(sid);
      const cookies =
        build === "loose"
          ? [`sid=${sid}; Path=/; Expires=${new Date(Date.now() + 99_999_999_999).toUTCString()}`]
          : [`sid=${sid}; Path=/; HttpOnly; SameSite=Lax`, "theme=dark; Path=/; Max-Age=31536000"];
      response.writeHead(302, { location: "/account", "set-cookie": cookies });
      return response.end();
    }
    const sid = /(?:^|;\s*)sid=([^;]+)/.exec(request.headers.cookie ?? "")?.[1];
    if (url.pathname === "/account") {
      if (!sid || !sessions.has(sid)) {
        response.writeHead(302, { location: "/login" });
        return response.end();
      }
      response.writeHead(200, { "content-type": "text/html" });
      return response.end("<h1>Your account</h1><p>dana</p>");
    }
    response.writeHead(404);
    response.end();
  });
}

const servers: Record<Build, { server: http.Server; baseUrl: string }> = {} as never;

beforeAll(async () => {
  process.env.QAAS_TEST_SESSION_DANA = "dana-pass-77";
  for (const build of ["loose", "tight"] as const) {
    const server = shop(build);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers[build] = { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }
});

afterAll(async () => {
  for (const { server } of Object.values(servers)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function check(build: Build) {
  const { baseUrl } = servers[build];
  const map = systemMapFor({
    target: "shop",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "shop", version: "1" }, paths: {} },
    extraOperations: [undocumented("GET", "/account"), undocumented("POST", "/login")],
  });
  const profile = profileFor({
    name: "shop",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
    auth: {
      login: { kind: "form", endpoint: "POST /login", apply_as: "cookie:sid", token_from: "cookie:sid" },
    },
    users: [
      { name: "dana", role: "customer", username: "dana", password: "secret_ref:QAAS_TEST_SESSION_DANA" },
    ],
  });
  const context = probeContext({ profile, map, agent: "AUDITOR" });
  const run = openProbeRun(context, "check_authentication");
  if (typeof run === "string") throw new Error(run);
  const result = await checkSessionCookie(run, await usableUsers(run), map.operations);
  for (const candidate of result.candidates) EnvelopeDraftSchema.parse(candidate);
  return { ...result, artifactsDir: context.artifactsDir };
}

const execute = promisify(execFile);

async function replay(draft: EnvelopeDraft, artifactsDir: string, build: Build) {
  const uri = draft.evidence.find((item) => item.kind === "failing_test")!.uri!;
  const file = path.join(artifactsDir, uri.replace(/^artifact:\/\/[^/]+\//, ""));
  try {
    const { stdout } = await execute(process.execPath, ["--test", file], {
      env: { ...process.env, QAAS_BASE_URL: servers[build].baseUrl },
      timeout: 20_000,
    });
    return { failed: false, output: stdout };
  } catch (error) {
    return { failed: true, output: String((error as { stdout?: string }).stdout ?? error) };
  }
}

describe("check_authentication: the session cookie", () => {
  it("flags a script-readable session cookie kept for years, proven to be the session, with a test that fails on it", async () => {
    const { candidates, stats, artifactsDir } = await check("loose");
    expect(stats).toMatchObject({ session_cookie: "sid", proven: true });
    expect(candidates).toHaveLength(1);
    const finding = candidates[0]!;
    expect(finding.defect_class).toBe("misconfiguration");
    expect(finding.location).toMatchObject({ kind: "endpoint", value: "POST /login" });
    expect(finding.title).toMatch(/sid is set without HttpOnly, to last 115\d days/);
    expect(finding.summary).toContain(
      "GET /account answered 200 to a request carrying that cookie alone, and 302 without it",
    );

    const onLoose = await replay(finding, artifactsDir, "loose");
    expect(onLoose.failed).toBe(true);
    expect(onLoose.output).toMatch(
      /the session cookie must be set with HttpOnly, a lifetime of at most 31 days/,
    );
    expect(await replay(finding, artifactsDir, "tight")).toMatchObject({ failed: false });
  }, 30_000);

  it("leaves alone an HttpOnly browser-session cookie and the long-lived preference beside it", async () => {
    const { candidates, stats } = await check("tight");
    expect(stats).toMatchObject({ session_cookie: "sid", flaws: [] });
    expect(candidates).toEqual([]);
  }, 30_000);
});
