import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderFailingTest } from "../../src/probes/evidence/failing-test.ts";
import { profileFor } from "../fixtures/probe-harness.ts";
import { runNodeTest } from "../support/node-test.ts";
import { ALICE, client, poolFor, setPasswords } from "./session-support.ts";

// An OAuth2 password grant as FastAPI's tutorial builds it: `POST /token` takes `username` and `password`
// as form fields and answers `{ access_token, token_type }`; no page shows a form and no cookie is set.

let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  setPasswords();
  const tokens = new Map<string, string>();
  server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
    const send = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (request.method === "POST" && request.url === "/token") {
      const typed = (request.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded");
      if (!typed || form.get("username") !== "alice" || form.get("password") !== "alice-password")
        return send(400, { detail: "Incorrect username or password" });
      const token = `token-${tokens.size + 1}-alice`;
      tokens.set(token, "alice");
      return send(200, { access_token: token, token_type: "bearer" });
    }
    if (request.url === "/users/me") {
      const user = tokens.get((request.headers.authorization ?? "").replace(/^Bearer /, ""));
      return user ? send(200, { username: user }) : send(401, { detail: "Not authenticated" });
    }
    return send(404, { detail: "Not Found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("form sign-in to a password grant", () => {
  it("takes the token from the JSON answer when the post sets no cookie, and sends it as a bearer", async () => {
    const pool = poolFor(baseUrl, { login: { kind: "form", endpoint: "POST /token" } }, [ALICE]);
    const http = client();
    const credential = await pool.signIn("alice", http);
    expect(credential.token).toBe("token-1-alice");
    const me = await pool.send(http, "alice", { method: "GET", url: `${baseUrl}/users/me` });
    expect(me.response?.status).toBe(200);
    expect(me.response?.json).toEqual({ username: "alice" });
  });

  it("signs a generated test in the same way", async () => {
    const profile = profileFor({
      name: "grant",
      source: {},
      environment: { mode: "managed", base_url: baseUrl },
      auth: { login: { kind: "form", endpoint: "POST /token" } },
      users: [ALICE],
    });
    const script = {
      title: "me as alice",
      steps: [{ name: "me", as: "alice", method: "GET", path: "/users/me" }],
      assertions: [
        { kind: "status_in" as const, step: "me", values: [401], message: "the caller is refused" },
      ],
    };
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-grant-"));
    const file = path.join(folder, "grant.test.mjs");
    fs.writeFileSync(file, renderFailingTest(script, profile, baseUrl));
    const result = await runNodeTest(file, { QAAS_BASE_URL: baseUrl });
    fs.rmSync(folder, { recursive: true, force: true });
    // Signed in with the bearer token, the read answers 200, so the assertion of a refusal is what fails.
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/the caller is refused/);
    expect(result.output).toMatch(/got 200/);
  });
});
