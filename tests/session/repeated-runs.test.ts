import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderFailingTest, TIMED_MARK, WAITS_MARK } from "../../src/probes/evidence/failing-test.ts";
import { repeatCommand } from "../../src/tools/testing/finding-test.ts";
import { profileFor } from "../fixtures/probe-harness.ts";

// Generated tests run three times in one process, as the REPRODUCER runs them. Runs share what must be paid
// once: the wait for a token to expire (one sign-in, one wait, declared so the runner's timeout covers it),
// a timing test's warm-up, and a sign-in whose token goes in a header (a cookie session is not shared).

let server: http.Server;
let baseUrl: string;
let signIns = 0;
let warmUps = 0;
let pausedSends = 0;
let folder: string;

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

beforeAll(async () => {
  process.env.QAAS_TEST_EXPIRY_PW = "expiry-pw";
  server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      response.setHeader("content-type", "application/json");
      if (request.url === "/login") {
        signIns += 1;
        const ttl = Number((JSON.parse(body) as { ttl?: number }).ttl ?? 3600);
        const head = encode({ alg: "HS256", typ: "JWT" });
        const claims = encode({ sub: "ann", exp: Math.floor(Date.now() / 1000) + ttl });
        const signature = createHmac("sha256", "k").update(`${head}.${claims}`).digest("base64url");
        return response.end(JSON.stringify({ token: `${head}.${claims}.${signature}` }));
      }
      if (request.url === "/warm") warmUps += 1;
      // A busy machine: of every three sends, the first two are held up; the handler itself is quick.
      if (request.url === "/paused") {
        pausedSends += 1;
        if (pausedSends % 3 !== 0) return setTimeout(() => response.end("{}"), 600);
      }
      // The defect: the signature is checked, the expiry never is.
      response.end(JSON.stringify({ ok: Boolean(request.headers.authorization) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-expired-"));
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(folder, { recursive: true, force: true });
});

/** Runs the test three times in one process, as the REPRODUCER does; answers its TAP output. */
function runThreeTimes(file: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      "/bin/sh",
      ["-c", repeatCommand(file, 3)],
      { env: { ...process.env, QAAS_BASE_URL: baseUrl }, timeout: 30_000 },
      (_error, stdout) => resolve(stdout),
    );
  });
}

describe("a generated expired-token test run three times", () => {
  it("signs in and waits once, declares its wait, and fails every run on its own assertion", async () => {
    const profile = profileFor({
      name: "expiry",
      source: {},
      environment: { mode: "managed", base_url: baseUrl },
      auth: { login: { kind: "json", endpoint: "POST /login", token_from: "body:token" } },
      users: [{ name: "ann", role: "member", username: "ann", password: "secret_ref:QAAS_TEST_EXPIRY_PW" }],
    });
    const source = renderFailingTest(
      {
        title: "an expired token is refused",
        steps: [
          {
            name: "forged",
            method: "GET",
            path: "/api/summary",
            forge: { from: "ann", kind: "expired", lifetime: { field: "ttl", value: 1 }, waitMs: 1000 },
          },
        ],
        assertions: [{ kind: "not_success", step: "forged", message: "an expired token must be refused" }],
      },
      profile,
      baseUrl,
    );
    expect(source).toContain(`// ${WAITS_MARK} 6`);
    expect(source).not.toContain(TIMED_MARK);
    const file = path.join(folder, "expired.test.mjs");
    fs.writeFileSync(file, source);
    const output = await runThreeTimes(file);
    expect(output.match(/^not ok \d/gm)).toHaveLength(3);
    expect(output).toContain("an expired token must be refused");
    expect(signIns).toBe(1);
  });

  it("sends a step marked once only in the first of the repeated runs", async () => {
    const file = path.join(folder, "warm.test.mjs");
    const source = renderFailingTest(
      {
        title: "answers quickly",
        steps: [
          { name: "warm-up", method: "GET", path: "/warm", once: true },
          { name: "timed", method: "GET", path: "/timed" },
        ],
        assertions: [{ kind: "duration_below", step: "timed", ms: 5000, message: "must answer quickly" }],
      },
      undefined,
      baseUrl,
    );
    fs.writeFileSync(file, source);
    const output = await runThreeTimes(file);
    expect(output.match(/^ok \d/gm)).toHaveLength(3);
    expect(warmUps).toBe(1);
  });

  it("times a step marked fastestOf by its fastest send, so a busy machine's pauses do not decide", async () => {
    const file = path.join(folder, "fastest.test.mjs");
    const source = renderFailingTest(
      {
        title: "answers quickly",
        steps: [{ name: "timed", method: "GET", path: "/paused", fastestOf: 3 }],
        assertions: [
          { kind: "duration_below", step: "timed", ms: 400, message: "must answer within 400 ms" },
        ],
      },
      undefined,
      baseUrl,
    );
    // Marked for the runner, which gives a test that times the target the target to itself.
    expect(source).toContain(`// ${TIMED_MARK}`);
    fs.writeFileSync(file, source);
    const output = await runThreeTimes(file);
    expect(output.match(/^ok \d/gm)).toHaveLength(3);
    expect(pausedSends).toBe(9);
  });

  for (const [applyAs, expected] of [
    ["header:Authorization", 1],
    ["cookie:session", 3],
  ] as const) {
    it(`signs in ${expected === 1 ? "once" : "every run"} when the token goes in ${applyAs.split(":")[0]}s`, async () => {
      const profile = profileFor({
        name: "shared",
        source: {},
        environment: { mode: "managed", base_url: baseUrl },
        auth: {
          login: { kind: "json", endpoint: "POST /login", token_from: "body:token", apply_as: applyAs },
        },
        users: [{ name: "ann", role: "member", username: "ann", password: "secret_ref:QAAS_TEST_EXPIRY_PW" }],
      });
      const file = path.join(folder, `shared-${applyAs.split(":")[0]}.test.mjs`);
      fs.writeFileSync(
        file,
        renderFailingTest(
          {
            title: "reads the summary",
            steps: [{ name: "read", as: "ann", method: "GET", path: "/api/summary" }],
            assertions: [{ kind: "status_in", step: "read", values: [200], message: "must answer 200" }],
          },
          profile,
          baseUrl,
        ),
      );
      const before = signIns;
      const output = await runThreeTimes(file);
      expect(output.match(/^ok \d/gm)).toHaveLength(3);
      expect(signIns - before).toBe(expected);
    });
  }
});
