import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSecurityHeaders } from "../../src/probes/auditor/misconfig-headers.ts";
import { slowOperationsFor } from "../../src/probes/http/slow-operations.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// An API of a hundred JSON reads and one server-rendered page that the crawl saw: the page lacks the
// protective headers. The check has a page allowance, so it must spend it on pages, not on JSON answers.

let server: http.Server;
let baseUrl: string;
const requested: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    requested.push(request.url ?? "");
    if (request.url === "/reports/overview")
      response.writeHead(200, { "content-type": "text/html" }).end("<title>Overview</title><p>ok</p>");
    else if (request.url?.startsWith("/api/"))
      response.writeHead(200, { "content-type": "application/json" }).end("[]");
    else response.writeHead(404, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the security-headers check", () => {
  it("looks at the pages the crawl saw before the API's many JSON reads", async () => {
    const paths = Object.fromEntries(
      Array.from({ length: 100 }, (_, index) => [
        `/api/items${index}`,
        { get: { responses: { "200": { description: "items" } } } },
      ]),
    );
    const document = { openapi: "3.0.3", info: { title: "api", version: "1" }, paths };
    const map = systemMapFor({
      target: "fixture-api",
      baseUrl,
      document,
      pages: [{ path: "/reports/overview", title: "Overview", links: [], forms: [], roles: ["anonymous"] }],
    });
    const profile = profileFor({
      name: "fixture-api",
      source: {},
      environment: { mode: "external", base_url: baseUrl },
    });
    const run = openProbeRun(probeContext({ profile, map, agent: "AUDITOR" }), "check_misconfiguration");
    if (typeof run === "string") throw new Error(run);
    const stats = { pages_checked: 0 };
    const findings = await checkSecurityHeaders(run, undefined, stats);
    expect(findings.map((finding) => finding.location.value)).toEqual(["GET /reports/overview"]);
    expect(findings[0]!.title).toMatch(/content-security-policy, x-content-type-options, x-frame-options/);
  });

  it("leaves alone an operation the run already found slow", async () => {
    const document = {
      openapi: "3.0.3",
      info: { title: "api", version: "1" },
      paths: { "/reports/overview": { get: { responses: { "200": { description: "page" } } } } },
    };
    const map = systemMapFor({ target: "fixture-api", baseUrl, document });
    const profile = profileFor({
      name: "fixture-api",
      source: {},
      environment: { mode: "external", base_url: baseUrl },
    });
    const context = probeContext({ profile, map, agent: "AUDITOR" });
    const pacing = slowOperationsFor(context);
    await pacing.enter("GET /reports/overview");
    pacing.leave("GET /reports/overview", 9000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const run = openProbeRun(context, "check_misconfiguration");
    if (typeof run === "string") throw new Error(run);
    requested.length = 0;
    expect(await checkSecurityHeaders(run, undefined, { pages_checked: 0 })).toEqual([]);
    expect(requested).not.toContain("/reports/overview");
  });
});
