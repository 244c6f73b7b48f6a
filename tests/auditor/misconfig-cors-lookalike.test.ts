import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { checkCors } from "../../src/probes/auditor/misconfig-cors.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// Twenty signed-in reads without any CORS policy, and one route with its own allow-list. The vulnerable
// allow-list only checks that the Origin ends with the company's domain (so `evilexample.test` passes);
// the safe one wants the exact host. The allow-list route sorts last, where a look at the first few
// answering routes would never reach it.

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

const TOKEN = "cors-fixture-token";

async function probe(vulnerable: boolean, quiet = false, reads = 20) {
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      response
        .writeHead(status, { ...headers, "content-type": "application/json" })
        .end(JSON.stringify(body));
    if (url.pathname === "/api/login") return json(200, { token: TOKEN });
    if (request.headers.authorization !== `Bearer ${TOKEN}`) return json(401, { error: "sign in" });
    if (url.pathname === "/api/zz/profile") {
      const origin = request.headers.origin ?? "";
      const trusted = vulnerable ? origin.endsWith("example.test") : origin === "https://app.example.test";
      const cors: Record<string, string> = quiet ? {} : { vary: "Origin" };
      if (trusted) {
        cors["access-control-allow-origin"] = origin;
        cors["access-control-allow-credentials"] = "true";
      }
      return json(200, { email: "ann@example.test", plan: "pro" }, cors);
    }
    return json(200, [{ id: 1, path: url.pathname }]);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const read = { get: { security: [{ bearer: [] }], responses: { "200": { description: "data" } } } };
  const profileRead = {
    get: {
      security: [{ bearer: [] }],
      responses: {
        "200": {
          description: "the caller",
          content: {
            "application/json": {
              schema: { type: "object", properties: { email: { type: "string" }, plan: { type: "string" } } },
            },
          },
        },
      },
    },
  };
  const paths: Record<string, unknown> = { "/api/zz/profile": profileRead };
  for (let index = 0; index < reads; index += 1) paths[`/api/a${String(index).padStart(2, "0")}`] = read;
  const document = {
    openapi: "3.0.3",
    info: { title: "cors", version: "1" },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    paths,
  };
  process.env.CORS_FIXTURE_PASSWORD = "ann-pw";
  const profile = profileFor({
    name: "cors-fixture",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
    auth: { login: { kind: "json", endpoint: "POST /api/login", token_from: "body:token" } },
    users: [
      {
        name: "ann",
        role: "member",
        username: "ann@example.test",
        password: "secret_ref:CORS_FIXTURE_PASSWORD",
      },
    ],
  });
  const map = systemMapFor({ target: "cors-fixture", baseUrl, document });
  const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_misconfiguration");
  if (typeof run === "string") throw new Error(run);
  await run.sessions.signIn("ann", run.client);
  return checkCors(run, "ann", { cors_checked: 0 });
}

describe("CORS allow-lists that trust look-alikes of the application's own domain", () => {
  it("finds the suffix check on the one route that has a policy, past the routes that have none", async () => {
    const findings = await probe(true);
    expect(findings.map((finding) => finding.location.value)).toEqual(["GET /api/zz/profile"]);
    expect(findings[0]!.title).toMatch(/ending in example\.test/);
  });

  it("finds it also when a refused origin gets no CORS header at all, by the personal data the route answers", async () => {
    const findings = await probe(true, true);
    expect(findings.map((finding) => finding.location.value)).toEqual(["GET /api/zz/profile"]);
  });

  it("reaches the route among more signed-in reads than it checks, by the personal fields its document names", async () => {
    const findings = await probe(true, true, 70);
    expect(findings.map((finding) => finding.location.value)).toEqual(["GET /api/zz/profile"]);
  });

  it("reports nothing when the route wants its exact host", async () => {
    expect(await probe(false)).toEqual([]);
  });
});
