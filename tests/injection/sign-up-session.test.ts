import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { sendAt } from "../../src/probes/injection/point-sender.ts";
import { probePoints } from "../../src/probes/injection/probe-frame.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";

// A cookie-session app whose sign-up signs the caller in as the new account, whatever session it came
// with (as Flask-Login's login_user after registration does). A probe that sends the sign-up form with a
// profile user's session would turn that user into the throw-away account for the rest of the run.

const sessions = new Map<string, string>();
let server: http.Server;
let baseUrl: string;
let counter = 0;

async function body(request: http.IncomingMessage): Promise<URLSearchParams> {
  let text = "";
  for await (const chunk of request) text += chunk;
  return new URLSearchParams(text);
}

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    const sid = /sid=([^;]+)/.exec(request.headers.cookie ?? "")?.[1];
    const signInAs = (name: string) => {
      counter += 1;
      const id = `s${counter}`;
      sessions.set(id, name);
      response.setHeader("set-cookie", `sid=${id}; Path=/; HttpOnly`);
    };
    if (request.url === "/login" && request.method === "POST") {
      const form = await body(request);
      signInAs(form.get("username") ?? "?");
      return response.writeHead(302, { location: "/me" }).end();
    }
    if (request.url === "/signup" && request.method === "POST") {
      const form = await body(request);
      signInAs(form.get("username") ?? "new");
      return response.writeHead(302, { location: "/me" }).end();
    }
    if (request.url === "/me") {
      const name = sid ? sessions.get(sid) : undefined;
      return name
        ? response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name }))
        : response.writeHead(401).end();
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("a probe that sends a sign-up form", () => {
  it("sends it as an anonymous visitor, so the profile user's session stays theirs", async () => {
    process.env.SIGNUP_FIXTURE_PASSWORD = "alice-password";
    const signUp: Operation = {
      ...undocumented("POST", "/signup"),
      roles: ["member"],
      request_body: {
        content_type: "application/x-www-form-urlencoded",
        required: true,
        schema: {
          type: "object",
          properties: { username: { type: "string" }, password: { type: "string" } },
          required: ["username", "password"],
        },
      },
    };
    const map = systemMapFor({
      target: "signup",
      baseUrl,
      document: { openapi: "3.0.3", info: { title: "none", version: "0" }, paths: {} },
      extraOperations: [signUp, undocumented("GET", "/me")],
    });
    map.openapi = null;
    const profile = profileFor({
      name: "signup",
      source: {},
      environment: { mode: "managed", base_url: baseUrl, allow_writes: true },
      auth: {
        login: {
          kind: "form",
          endpoint: "POST /login",
          body: { username: "{username}", password: "{password}" },
          token_from: "cookie:sid",
          apply_as: "cookie:sid",
        },
      },
      users: [
        { name: "alice", role: "member", username: "alice", password: "secret_ref:SIGNUP_FIXTURE_PASSWORD" },
      ],
    });
    const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "signup-test");
    if (typeof run === "string") throw new Error(run);
    const me = async () =>
      (await run.sessions.send(run.client, "alice", { method: "GET", url: `${baseUrl}/me` })).response?.json;
    expect(await me()).toEqual({ name: "alice" });
    const { stats } = await probePoints(
      run,
      {},
      {
        select: (point) => point.operation.path === "/signup",
        test: async (open) => {
          await sendAt(run, open, "probe-value");
          return undefined;
        },
      },
    );
    expect(stats.tested).toBeGreaterThan(0);
    expect(await me()).toEqual({ name: "alice" });
    // Whatever sends it with her session, the answer's new session cookie does not become hers.
    const form = "username=someone-else&password=whatever-1";
    await run.sessions.send(run.client, "alice", {
      method: "POST",
      url: `${baseUrl}/signup`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    expect(await me()).toEqual({ name: "alice" });
  });
});
