import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type EnvelopeDraft, EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import type { Operation } from "../../src/map/system-map.ts";
import { checkCookieForgery } from "../../src/probes/auth/cookie-forgery.ts";
import {
  expressCookieSecret,
  expressSignedCookies,
  rewrittenValue,
  signedCookies,
} from "../../src/probes/auth/express-cookies.ts";
import type { SigningScheme } from "../../src/probes/auth/signed-cookie.ts";
import {
  crackSignedCookie,
  parseSignedCookie,
  SIGNING_SCHEMES,
  signCookie,
  signedWith,
} from "../../src/probes/auth/signed-cookie.ts";
import { secretsInText } from "../../src/probes/auth/source-secrets.ts";
import { openProbeRun, usableUsers } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// Signed session cookies: the itsdangerous format checked against cookies Flask 2.2 itself signed (secret
// "vector-secret-key"), secrets read from source text, and the whole check against a small app that signs
// its session like Flask — with a secret its source falls back to (vulnerable), or with one from its
// environment while the source holds only a decoy literal that signs nothing (safe).

const FLASK_PLAIN = "eyJ1c2VyX2lkIjo3LCJjc3JmIjoiYWJjIn0.aw-ZcA.NzFIdmsJnX0z5Yz2E_4EhLTgMQE";
const FLASK_COMPRESSED =
  ".eJyrViotTi2Kz0xRsjLXUUouLkpTslJKTEpW0lEqSAQKKlUME6BUCwAL4Gg-.aw-ZcA.gNUX-tOkLman53S9g46A9K4FfGQ";
const FLASK_SCHEME: SigningScheme = SIGNING_SCHEMES[0]!;

describe("itsdangerous-signed cookies", () => {
  it("reads, cracks and re-signs cookies Flask signed", () => {
    const plain = parseSignedCookie(FLASK_PLAIN)!;
    expect(plain.data).toEqual({ user_id: 7, csrf: "abc" });
    expect(crackSignedCookie(plain, ["dev", "secret", "vector-secret-key"])?.secret).toBe(
      "vector-secret-key",
    );
    expect(crackSignedCookie(plain, ["dev", "secret"])).toBeUndefined();
    const compressed = parseSignedCookie(FLASK_COMPRESSED)!;
    expect(compressed.compressed).toBe(true);
    expect(compressed.data.pad).toBe("x".repeat(200));
    expect(signedWith(compressed, "vector-secret-key", FLASK_SCHEME)).toBe(true);
    // Signed again at the same second, the cookie is byte for byte Flask's.
    const seconds = Buffer.from(plain.timestamp, "base64url").reduce((total, byte) => total * 256 + byte, 0);
    expect(signCookie(plain.data, "vector-secret-key", FLASK_SCHEME, new Date(seconds * 1000))).toBe(
      FLASK_PLAIN,
    );
    const forged = parseSignedCookie(signCookie(compressed.data, "vector-secret-key", FLASK_SCHEME))!;
    expect(forged.data).toEqual(compressed.data);
    expect(signedWith(forged, "vector-secret-key", FLASK_SCHEME)).toBe(true);
  });

  it("leaves alone values that only look like it", () => {
    expect(parseSignedCookie("a.b.c")).toBeUndefined();
    expect(parseSignedCookie("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl")).toBeUndefined();
    expect(parseSignedCookie(randomBytes(20).toString("hex"))).toBeUndefined();
  });
});

describe("secrets written in source", () => {
  it("finds literals and environment fallbacks under secret-like names only", () => {
    const python = [
      'SECRET_KEY = os.environ.get("APP_SECRET_KEY", "acme-dev-secret")',
      'config = {"session_secret": "from-a-dict-2024"}',
      'TITLE = "Acme bookings"',
      'DEFAULT_PAGE_KEY = os.environ.get("PAGE", "not-a-secret-name")',
    ].join("\n");
    const values = secretsInText(python, "app/config.py").map((secret) => secret.value);
    expect(values).toEqual(expect.arrayContaining(["acme-dev-secret", "from-a-dict-2024"]));
    expect(values).not.toContain("Acme bookings");
    const node = 'app.use(session({ secret: process.env.SESSION_SECRET || "keyboard-cat-42" }));';
    expect(secretsInText(node, "server.js").map((secret) => secret.value)).toContain("keyboard-cat-42");
    expect(secretsInText('const secret = process.env.SECRET;\nconst name = "x";', "a.js")).toEqual([]);
  });
});

// A Flask-like app: POST /login sets `session` = signed {"uid": n}; GET /me shows the user's name.
function app(secret: string): http.Server {
  const users: Record<string, { password: string; uid: number }> = {
    carol: { password: "carol-pass-123", uid: 3 },
  };
  return http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://app.local");
    if (request.method === "POST" && url.pathname === "/login") {
      let text = "";
      for await (const chunk of request) text += chunk;
      const body = JSON.parse(text || "{}") as { username?: string; password?: string };
      const user = body.username ? users[body.username] : undefined;
      if (!user || user.password !== body.password) {
        response.writeHead(401, { "content-type": "application/json" });
        return response.end('{"error":"bad credentials"}');
      }
      const cookie = signCookie({ uid: user.uid }, secret, FLASK_SCHEME);
      response.writeHead(200, {
        "content-type": "application/json",
        "set-cookie": `session=${cookie}; Path=/`,
      });
      return response.end('{"ok":true}');
    }
    const raw = /(?:^|;\s*)session=([^;]+)/.exec(request.headers.cookie ?? "")?.[1];
    const cookie = parseSignedCookie(raw);
    const uid = cookie && signedWith(cookie, secret, FLASK_SCHEME) ? cookie.data.uid : undefined;
    const name = Object.entries(users).find(([, user]) => user.uid === uid)?.[0];
    if (url.pathname === "/me") {
      if (!name) {
        response.writeHead(401, { "content-type": "application/json" });
        return response.end('{"error":"sign in"}');
      }
      response.writeHead(200, { "content-type": "application/json" });
      return response.end(JSON.stringify({ name, uid }));
    }
    response.writeHead(404);
    response.end();
  });
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

interface Account {
  user: string;
  password: string;
  cookie: string;
}

const CAROL: Account = { user: "carol", password: "carol-pass-123", cookie: "session" };

async function check(secretInUse: string) {
  const server = app(secretInUse);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return checkAt(
    `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ["settings.py", 'import os\nSECRET_KEY = os.environ.get("APP_SECRET_KEY", "acme-fallback-secret")\n'],
    CAROL,
  );
}

/** The cookie-forgery check against the app at `baseUrl`, whose source is the one file given. */
async function checkAt(baseUrl: string, [file, text]: [string, string], account: Account) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-cookie-"));
  fs.writeFileSync(path.join(root, file), text);
  const secretName = `QAAS_TEST_COOKIE_${account.user.toUpperCase()}`;
  process.env[secretName] = account.password;
  const me: Operation = {
    method: "GET",
    path: "/me",
    security: "unknown",
    parameters: [],
    responses: {},
    seen_in: ["source"],
    documented: false,
  };
  const map = systemMapFor({
    target: "acme",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "acme", version: "1" }, paths: {} },
    extraOperations: [me],
  });
  const profile = profileFor({
    name: "acme",
    source: { path: root },
    environment: { mode: "managed", base_url: baseUrl },
    auth: {
      login: {
        kind: "json",
        endpoint: "POST /login",
        body: { username: "{username}", password: "{password}" },
        token_from: `cookie:${account.cookie}`,
        apply_as: `cookie:${account.cookie}`,
      },
    },
    users: [
      { name: account.user, role: "member", username: account.user, password: `secret_ref:${secretName}` },
    ],
  });
  const run = openProbeRun(probeContext({ profile, map, root, agent: "AUDITOR" }), "check_authentication");
  if (typeof run === "string") throw new Error(run);
  const result = await checkCookieForgery(run, await usableUsers(run), map.operations);
  for (const candidate of result.candidates) EnvelopeDraftSchema.parse(candidate);
  fs.rmSync(root, { recursive: true, force: true });
  return result;
}

/** One finding that names the source file holding the secret, and never the secret itself. */
function expectOneForgery(candidates: readonly EnvelopeDraft[], file: string, secret: string): void {
  expect(candidates).toHaveLength(1);
  expect(candidates[0]!.location.related).toEqual(expect.arrayContaining([{ kind: "file", value: file }]));
  expect(JSON.stringify(candidates[0])).not.toContain(secret);
}

describe("session cookie forgery", () => {
  it("signs a session with the secret the source falls back to and is let in", async () => {
    const { candidates, stats } = await check("acme-fallback-secret");
    expect(stats.secret_found).toBe(true);
    expectOneForgery(candidates, "settings.py", "acme-fallback-secret");
    expect(candidates[0]!.defect_class).toBe("broken-authentication");
  }, 30_000);

  it("reports nothing when the deployment signs with its own secret", async () => {
    const { candidates, stats } = await check(randomBytes(24).toString("hex"));
    expect(stats.signed_cookie).toBe(true);
    expect(stats.secret_found).toBe(false);
    expect(candidates).toEqual([]);
  }, 30_000);
});

// The same check against Express with the real session middleware, in its own process.
const EXPRESS_APP = path.join(path.dirname(fileURLToPath(import.meta.url)), "express-session-app.mjs");
const DANA: Account = { user: "dana", password: "dana-pass-123", cookie: "connect.sid" };
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

async function expressApp(sessions: "express-session" | "cookie-session", secret: string): Promise<string> {
  const child = spawn(process.execPath, [EXPRESS_APP], {
    env: { ...process.env, APP_SESSIONS: sessions, APP_SECRET: secret },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once("exit", (code) => reject(new Error(`the Express app exited (${code})`)));
  });
  return `http://127.0.0.1:${port}`;
}

const SERVER_JS: [string, string] = [
  "server.js",
  'app.use(session({ secret: process.env.SESSION_SECRET || "dana-shop-2024", resave: false }));\n',
];

describe("session cookies Node middleware signs", () => {
  it("reads, checks and signs cookie-signature and Keygrip values as the libraries do", () => {
    // Signed with "k1" by cookie-signature 1.2 (express-session's id; cookie-parser's `j:` object) and by
    // Keygrip 1.1 (cookie-session's body `{"userId":4}` and its `.sig`).
    const SESSION_ID = "s%3AXq3vOa0d2-bbHkYt9cMq5Yj1r7lYH0cZ.Ey64dad62zN7eCnM46sFCjjwaRM7M3MEQXB7uxvOaI0";
    const PARSER_OBJECT = "s%3Aj%3A%7B%22uid%22%3A4%7D.Bnk4cVqZaTp1MHO8UsCACdgoHWboRgiXJ3R1zY00s5k";
    const KEYGRIP = { session: "eyJ1c2VySWQiOjR9", "session.sig": "dXgLOzuY-tJ694AGNAGFaIYwvbA" };

    const [id] = expressSignedCookies({ "connect.sid": SESSION_ID });
    expect(id).toMatchObject({ format: "cookie-signature", value: "Xq3vOa0d2-bbHkYt9cMq5Yj1r7lYH0cZ" });
    expect(id!.data).toBeUndefined();
    expect(rewrittenValue(id!)).toBeUndefined();
    expect(expressCookieSecret(id!, ["k0", "k1"])).toBe("k1");
    expect(expressCookieSecret(id!, ["k0"])).toBeUndefined();
    expect(signedCookies("cookie-signature", "connect.sid", id!.value, "k1")).toEqual({
      "connect.sid": SESSION_ID,
    });

    const [object] = expressSignedCookies({ prefs: PARSER_OBJECT });
    expect(object!.data).toEqual({ uid: 4 });
    expect(expressCookieSecret(object!, ["k1"])).toBe("k1");
    expect(signedCookies("cookie-signature", "prefs", object!.value, "k1")).toEqual({ prefs: PARSER_OBJECT });
    // Rewritten, it is the same object in bytes nobody signed.
    const rewritten = rewrittenValue(object!)!;
    expect(rewritten).not.toBe(object!.value);
    expect(JSON.parse(rewritten.slice(2))).toEqual({ uid: 4 });

    const [pair] = expressSignedCookies(KEYGRIP);
    expect(pair).toMatchObject({ format: "keygrip", name: "session", data: { userId: 4 } });
    expect(expressCookieSecret(pair!, ["k0", "k1"])).toBe("k1");
    expect(signedCookies("keygrip", "session", pair!.value, "k1")).toEqual(KEYGRIP);

    expect(expressSignedCookies({ other: "s:not-signed", plain: "abc", "plain.sig": "short" })).toEqual([]);
  });

  it("proves a cookie-session signed with a literal of the source by a forged value the server accepts", async () => {
    const baseUrl = await expressApp("cookie-session", "dana-shop-2024");
    const { candidates, stats } = await checkAt(baseUrl, SERVER_JS, { ...DANA, cookie: "session" });
    expect(stats.formats).toEqual(["Keygrip, as cookie-session signs it"]);
    expectOneForgery(candidates, "server.js", "dana-shop-2024");
    expect(candidates[0]!.severity).toBe("critical");
    expect(candidates[0]!.title).toContain("anyone can forge a session");
  }, 30_000);

  it("names an express-session id signed with a literal of the source, and nothing when the secret is the deployment's own", async () => {
    const weak = await checkAt(await expressApp("express-session", "dana-shop-2024"), SERVER_JS, DANA);
    expect(weak.candidates).toHaveLength(1);
    expect(weak.candidates[0]!.severity).toBe("medium");
    expect(weak.candidates[0]!.title).toContain(
      "session id cookie is signed with a secret written in the source",
    );
    const own = await checkAt(
      await expressApp("express-session", randomBytes(24).toString("hex")),
      SERVER_JS,
      DANA,
    );
    expect(own.stats.signed_cookie).toBe(true);
    expect(own.stats.secret_found).toBe(false);
    expect(own.candidates).toEqual([]);
  }, 30_000);
});
