import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSecurityHeaders } from "../../src/probes/auditor/misconfig-headers.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { runGeneratedTest } from "../support/fuzz-run.ts";
import type { TextServer } from "../support/text-server.ts";
import { startTextServer } from "../support/text-server.ts";

// A shop whose framework names itself on every answer, HTML and JSON alike, beside a site that sends only
// look-alikes: the cache node that served it and its own request id. Only the first is a finding, once for
// the header however many answers carry it, and its generated test passes once the header is switched off.

let framework = "Express";
let shop: TextServer;
let quiet: TextServer;

function answer(response: import("node:http").ServerResponse, url: string, extra: Record<string, string>) {
  if (url === "/")
    response.writeHead(200, { "content-type": "text/html", ...extra }).end("<title>Shop</title>");
  else if (url === "/api/products")
    response.writeHead(200, { "content-type": "application/json", ...extra }).end("[]");
  else response.writeHead(404, { "content-type": "text/plain", ...extra }).end("not found");
}

beforeAll(async () => {
  shop = await startTextServer((request, _text, response) =>
    answer(response, request.url ?? "", framework ? { "x-powered-by": framework } : {}),
  );
  quiet = await startTextServer((request, _text, response) =>
    answer(response, request.url ?? "", { "x-served-by": "cache-ams-7", "x-request-id": "4f1c" }),
  );
});

afterAll(async () => {
  await shop.close();
  await quiet.close();
});

function auditorRun(baseUrl: string) {
  const document = {
    openapi: "3.0.3",
    info: { title: "shop", version: "1" },
    paths: { "/api/products": { get: { responses: { "200": { description: "products" } } } } },
  };
  const map = systemMapFor({
    target: "fixture-shop",
    baseUrl,
    document,
    pages: [{ path: "/", title: "Shop", links: [], forms: [], roles: ["anonymous"] }],
  });
  const profile = profileFor({
    name: "fixture-shop",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
  });
  const context = probeContext({ profile, map, agent: "AUDITOR" });
  const run = openProbeRun(context, "check_misconfiguration");
  if (typeof run === "string") throw new Error(run);
  return { context, run };
}

describe("the technology-header check", () => {
  it("reports a framework that names itself once, at the entry page, with the other answers related", async () => {
    framework = "Express";
    const { context, run } = auditorRun(shop.baseUrl);
    const findings = (await checkSecurityHeaders(run, undefined, { pages_checked: 0 })).filter((finding) =>
      finding.title.includes("technology"),
    );
    expect(findings).toHaveLength(1);
    const finding = findings[0]!;
    expect(finding.title).toContain("x-powered-by: Express");
    expect(finding.location).toEqual({
      kind: "page",
      value: "/",
      related: [{ kind: "endpoint", value: "GET /api/products" }],
    });
    expect(await runGeneratedTest(context, finding, shop.baseUrl)).toMatch(
      /^failed: .*x-powered-by must not be sent/s,
    );
    framework = "";
    expect(await runGeneratedTest(context, finding, shop.baseUrl)).toBe("passed");
  });

  it("leaves alone headers that name a cache node or a request, not a framework", async () => {
    const { run } = auditorRun(quiet.baseUrl);
    const findings = await checkSecurityHeaders(run, undefined, { pages_checked: 0 });
    expect(findings.filter((finding) => finding.title.includes("technology"))).toEqual([]);
    expect(findings.length).toBeGreaterThan(0);
  });
});
