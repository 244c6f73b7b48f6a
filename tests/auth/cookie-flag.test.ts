import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { checkCookieFlags, flippedFlag, refused } from "../../src/probes/auth/cookie-flag.ts";
import type { HttpExchange } from "../../src/probes/http/http-types.ts";
import { openProbeRun, usableUsers } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";

// Access decided by a cookie the client keeps. The app sets plain flag cookies on its home page and at
// sign-in; two reads let in whoever flips theirs (a console refused in words, a report refused with 403),
// one more does for a signed-in user whose `role=user` becomes `admin`. The look-alikes: a flag that only
// changes the layout (never refuses), and a staff page that sets `staff=false` but decides on the session.

describe("which cookie values are flags, and their flipped value", () => {
  it("flips one word of a flag, keeps its case, and leaves tokens, counts and locales alone", () => {
    expect(flippedFlag("env", "graphiql:disable")).toBe("graphiql:enable");
    expect(flippedFlag("admin", "False")).toBe("True");
    expect(flippedFlag("ROLE", "GUEST")).toBe("ADMIN");
    expect(flippedFlag("is_admin", "0")).toBe("1");
    expect(flippedFlag("items", "0")).toBeUndefined();
    expect(flippedFlag("lang", "en-US")).toBeUndefined();
    expect(flippedFlag("theme", "dark")).toBeUndefined();
    expect(flippedFlag("token", `user-${"a".repeat(60)}`)).toBeUndefined();
  });

  it("reads a refusal from the status, a redirect to sign in, or a short answer that says so", () => {
    const answer = (status: number, body: string, location?: string) =>
      ({
        request: { method: "GET", url: "http://h/x", headers: {} },
        response: { status, headers: location ? { location } : {}, body, setCookies: [] },
      }) as unknown as HttpExchange;
    expect(refused(answer(403, "nope"))).toBe(true);
    expect(refused(answer(302, "", "/login?next=/x"))).toBe(true);
    expect(refused(answer(200, '{"errors":[{"message":"Console Access Rejected"}]}'))).toBe(true);
    expect(refused(answer(200, "<h1>Reports</h1>"))).toBe(false);
    expect(refused(answer(200, `<p>Access denied pages are explained below.</p>${"x".repeat(3000)}`))).toBe(
      false,
    );
  });
});

function app(): http.Server {
  const sessions = new Set<string>();
  return http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://flags.local");
    const cookies = Object.fromEntries(
      (request.headers.cookie ?? "")
        .split(";")
        .map((pair) => pair.trim().split("="))
        .filter((pair) => pair.length === 2),
    ) as Record<string, string>;
    const send = (status: number, body: string, headers: Record<string, string | string[]> = {}) => {
      response.writeHead(status, { "content-type": "text/html", ...headers });
      response.end(body);
    };
    if (url.pathname === "/")
      return send(200, "<h1>Home</h1>", {
        "set-cookie": [
          "env=console%3Adisable; Path=/",
          "admin=false; Path=/",
          "compact=false; Path=/",
          "staff=false; Path=/",
        ],
      });
    if (url.pathname === "/login" && request.method === "POST") {
      let text = "";
      for await (const chunk of request) text += chunk;
      const form = new URLSearchParams(text);
      if (form.get("username") !== "lee" || form.get("password") !== "lee-pass-31") return send(401, "no");
      const sid = randomUUID();
      sessions.add(sid);
      return send(200, "<p>welcome</p>", {
        "set-cookie": [`sid=${sid}; Path=/; HttpOnly`, "role=user; Path=/"],
      });
    }
    const signedIn = cookies.sid !== undefined && sessions.has(cookies.sid);
    if (url.pathname === "/console")
      return cookies.env === "console%3Aenable" || cookies.env === "console:enable"
        ? send(200, "<h1>Console</h1><pre>ready</pre>")
        : send(200, '{"errors":[{"message":"Console access rejected"}]}');
    if (url.pathname === "/admin-report")
      return cookies.admin === "true" ? send(200, "<h1>Revenue</h1><p>1200</p>") : send(403, "Forbidden");
    if (url.pathname === "/layout")
      return send(200, cookies.compact === "true" ? "<main class=compact>News</main>" : "<main>News</main>");
    if (url.pathname === "/staff") return send(403, "Forbidden: staff only");
    if (url.pathname === "/reports") {
      if (!signedIn) return send(302, "", { location: "/login" });
      return cookies.role === "admin" ? send(200, "<h1>All reports</h1>") : send(403, "Admins only");
    }
    send(404, "");
  });
}

let server: http.Server;
let baseUrl = "";

beforeAll(async () => {
  process.env.QAAS_TEST_COOKIE_FLAG_LEE = "lee-pass-31";
  server = app();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const execute = promisify(execFile);

describe("check_authentication: access decided by a flag cookie", () => {
  it("finds each read a flipped flag opens, anonymous or signed in, and nothing on the look-alikes", async () => {
    const map = systemMapFor({
      target: "flags",
      baseUrl,
      document: { openapi: "3.0.3", info: { title: "flags", version: "1" }, paths: {} },
      // GET /logout is a read the client refuses to send (it would end the run's sessions): skipped, not fatal.
      extraOperations: ["/", "/logout", "/console", "/admin-report", "/layout", "/staff", "/reports"]
        .map((route) => undocumented("GET", route))
        .concat(undocumented("POST", "/login")),
    });
    const profile = profileFor({
      name: "flags",
      source: {},
      environment: { mode: "managed", base_url: baseUrl },
      auth: {
        login: { kind: "form", endpoint: "POST /login", apply_as: "cookie:sid", token_from: "cookie:sid" },
      },
      users: [
        { name: "lee", role: "member", username: "lee", password: "secret_ref:QAAS_TEST_COOKIE_FLAG_LEE" },
      ],
    });
    const context = probeContext({ profile, map, agent: "AUDITOR" });
    const run = openProbeRun(context, "check_authentication");
    if (typeof run === "string") throw new Error(run);
    const { candidates, stats } = await checkCookieFlags(run, await usableUsers(run), map.operations);
    for (const candidate of candidates) EnvelopeDraftSchema.parse(candidate);

    expect(stats.flags).toEqual([
      "env=console:disable (anonymous)",
      "admin=false (anonymous)",
      "compact=false (anonymous)",
      "staff=false (anonymous)",
      "role=user (lee)",
    ]);
    expect(candidates.map((candidate) => candidate.title).sort()).toEqual([
      'GET /admin-report lets in whoever sets the cookie admin to "true" (the application sets "false")',
      'GET /console lets in whoever sets the cookie env to "console:enable" (the application sets "console:disable")',
      'GET /reports lets in whoever sets the cookie role to "admin" (the application sets "user")',
    ]);
    const report = candidates.find((candidate) => candidate.location.value === "GET /admin-report")!;
    expect(report).toMatchObject({ domain: "security", defect_class: "missing-authorization" });
    expect(report.summary).toContain("refused an anonymous visitor with that value (403) and answered 200");

    // Each anonymous finding's test fails while the flag decides, whether the refusal was a 403 or words
    // in a 200: the flipped cookie gets another answer.
    for (const [endpoint, cookie] of [
      ["GET /admin-report", "admin"],
      ["GET /console", "env"],
    ] as const) {
      const found = candidates.find((candidate) => candidate.location.value === endpoint)!;
      const uri = found.evidence.find((item) => item.kind === "failing_test")!.uri!;
      const file = path.join(context.artifactsDir, uri.replace(/^artifact:\/\/[^/]+\//, ""));
      const replay = await execute(process.execPath, ["--test", file], {
        env: { ...process.env, QAAS_BASE_URL: baseUrl },
        timeout: 20_000,
      }).catch((error: { stdout?: string }) => ({ failed: true, stdout: error.stdout ?? "" }));
      expect(replay).toMatchObject({
        failed: true,
        stdout: expect.stringContaining(
          `changing the cookie ${cookie} must not change what the server lets the caller do`,
        ),
      });
    }
  }, 60_000);
});
