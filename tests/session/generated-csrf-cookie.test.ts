import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReproScript, ReproStep } from "../../src/probes/evidence/failing-test.ts";
import { renderFailingTest } from "../../src/probes/evidence/failing-test.ts";
import { profileFor } from "../fixtures/probe-harness.ts";
import { runNodeTest } from "../support/node-test.ts";
import { ALICE, BOB, setPasswords } from "./session-support.ts";

// A generated test on an application that signs in through a form and wants, on every signed-in unsafe
// request, its readable CSRF cookie echoed in a header (Django's csrftoken and X-CSRFToken, as its REST
// framework's session authentication does): the test adds the header as the application's scripts would,
// except on a step that stands for a cross-site forgery; and a create the application refused stops the
// test as a set-up failure instead of letting the steps after it pass.

let server: http.Server;
let baseUrl: string;
let folder: string;
const notes = new Map<string, { owner: string; title: string }>();

beforeAll(async () => {
  setPasswords();
  folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-generated-csrf-"));
  const sessions = new Map<string, string>();
  const passwords: Record<string, string> = { alice: "alice-password", bob: "bob-password" };
  server = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on("end", () => {
      const cookies = Object.fromEntries(
        (request.headers.cookie ?? "").split(/;\s*/).map((part) => part.split("=") as [string, string]),
      );
      const send = (status: number, body: unknown, headers: Record<string, string | string[]> = {}) => {
        response.writeHead(status, { "content-type": "application/json", ...headers });
        response.end(JSON.stringify(body));
      };
      const url = new URL(request.url ?? "/", "http://x");
      if (url.pathname === "/accounts/login/" && request.method === "GET") {
        const token = randomBytes(16).toString("hex");
        response.writeHead(200, { "content-type": "text/html", "set-cookie": `csrftoken=${token}; Path=/` });
        return response.end(
          `<!doctype html><title>Sign in</title><form method="post" action="/accounts/login/"><input type="hidden" name="csrfmiddlewaretoken" value="${token}"><input name="username"><input type="password" name="password"><button>Sign in</button></form>`,
        );
      }
      if (url.pathname === "/accounts/login/" && request.method === "POST") {
        const form = new URLSearchParams(text);
        if (!cookies.csrftoken || form.get("csrfmiddlewaretoken") !== cookies.csrftoken)
          return send(403, { detail: "CSRF verification failed" });
        const user = form.get("username") ?? "";
        if (passwords[user] !== form.get("password")) return send(200, { detail: "wrong password" });
        const id = randomBytes(8).toString("hex");
        sessions.set(id, user);
        // Signing in rotates the CSRF token, as Django does.
        response.writeHead(302, {
          location: "/",
          "set-cookie": [
            `sessionid=${id}; Path=/; HttpOnly`,
            `csrftoken=${randomBytes(16).toString("hex")}; Path=/`,
          ],
        });
        return response.end();
      }
      const user = sessions.get(cookies.sessionid ?? "");
      if (!user) return send(403, { detail: "Authentication credentials were not provided." });
      if (url.pathname === "/api/notes/" && request.method === "POST") {
        if (!cookies.csrftoken || request.headers["x-csrftoken"] !== cookies.csrftoken)
          return send(403, { detail: "CSRF Failed: CSRF token missing or incorrect." });
        const id = String(notes.size + 1);
        notes.set(id, { owner: user, title: String((JSON.parse(text) as { title?: unknown }).title) });
        return send(201, { id: Number(id), ...notes.get(id) });
      }
      const item = url.pathname.match(/^\/api\/notes\/(\d+)\/$/);
      // The defect: any signed-in user reads any note.
      if (item && request.method === "GET" && notes.has(item[1]!)) return send(200, notes.get(item[1]!));
      return send(404, { detail: "Not found." });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(folder, { recursive: true, force: true });
});

async function runGenerated(script: ReproScript): Promise<{ code: number; output: string }> {
  const profile = profileFor({
    name: "django-like",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
    auth: {
      login: {
        kind: "form",
        endpoint: "POST /accounts/login/",
        body: { username: "{username}", password: "{password}" },
        token_from: "cookie:sessionid",
        apply_as: "cookie:sessionid",
      },
    },
    users: [ALICE, BOB],
  });
  const file = path.join(folder, `${script.title.replace(/\W+/g, "-")}.test.mjs`);
  fs.writeFileSync(file, renderFailingTest(script, profile, baseUrl));
  return runNodeTest(file, { QAAS_BASE_URL: baseUrl });
}

const create = (extra: Partial<ReproStep> = {}): ReproStep => ({
  name: "created",
  as: "alice",
  method: "POST",
  path: "/api/notes/",
  body: JSON.stringify({ title: "qaas-{{unique}}" }),
  contentType: "application/json",
  captureId: {},
  ...extra,
});

const readByBob: ReproScript["assertions"][number] = {
  kind: "status_in",
  step: "other",
  values: [403, 404],
  message: "bob must not read alice's note",
};

describe("generated tests on a cookie session that wants its CSRF cookie echoed", () => {
  it("echo the CSRF cookie on a signed-in write, so the replay reaches the defect", async () => {
    const before = notes.size;
    const outcome = await runGenerated({
      title: "note of alice read by bob",
      steps: [create(), { name: "other", as: "bob", method: "GET", path: "/api/notes/{{created.id}}/" }],
      assertions: [readByBob],
    });
    expect(notes.size).toBe(before + 1);
    expect(outcome.code).not.toBe(0);
    expect(outcome.output).toMatch(/bob must not read alice's note \(got 200\)/);
  }, 30_000);

  it("send a forged cross-site step without it, and stop on a create that was refused", async () => {
    const before = notes.size;
    const outcome = await runGenerated({
      title: "forged create",
      steps: [
        create({ csrf: false }),
        { name: "other", as: "bob", method: "GET", path: "/api/notes/{{created.id}}/" },
      ],
      assertions: [readByBob],
    });
    expect(notes.size).toBe(before);
    expect(outcome.code).not.toBe(0);
    expect(outcome.output).toMatch(
      /set-up failed: step created created nothing to refer to \(answered 403\)/,
    );
    expect(outcome.output).not.toMatch(/bob must not read/);
  }, 30_000);
});
