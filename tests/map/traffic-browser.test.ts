import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium } from "../../src/probes/traffic/chromium.ts";
import { recordTraffic, type TrafficResult } from "../../src/probes/traffic/record-traffic.ts";
import { candidatesFromTraffic } from "../../src/probes/traffic/traffic-candidates.ts";
import { type SpaServer, startSpaServer } from "./frontend-spa-server.ts";

// Real Chromium (Debian's package: `apt-get install -y chromium-headless-shell`, or chromium) loading the storefront fixture.

let spa: SpaServer;
let traffic: TrafficResult;

beforeAll(async () => {
  spa = await startSpaServer();
  traffic = await recordTraffic(
    spa.baseUrl,
    [
      { role: "anonymous", headers: async () => ({}), paths: ["/"] },
      {
        role: "member",
        headers: async () => ({ cookie: "sid=member-session", authorization: "Bearer member-token" }),
        paths: ["/"],
      },
    ],
    { settleMs: 2000 },
  );
}, 120_000);

afterAll(() => spa.close());

const seen = (role: string) =>
  traffic.requests
    .filter((request) => request.role === role)
    .map(
      (request) =>
        `${request.method} ${new URL(request.url).pathname}${new URL(request.url).search} ${request.page}`,
    )
    .sort();

describe("recordTraffic", () => {
  it("records the requests each page makes on load as each role, following rendered client-side links", () => {
    const expected = [
      "GET /api/basket /#/basket",
      "GET /api/products?limit=20 /",
      "GET /api/session /",
      "GET /api/session /#/basket",
      "POST /api/analytics/view /",
      "POST /api/analytics/view /#/basket",
    ];
    expect(seen("anonymous")).toEqual(expected);
    expect(seen("member")).toEqual(expected);
    expect(traffic.roles.map((role) => [role.role, role.pages, role.error])).toEqual([
      ["anonymous", 3, undefined],
      ["member", 3, undefined],
    ]);
    const view = traffic.requests.find((request) => request.method === "POST");
    expect(view).toMatchObject({ resourceType: "fetch", contentType: "application/json", sent: false });
    expect(JSON.parse(view?.postData ?? "{}")).toHaveProperty("page");
  });

  it("carries each role's cookies and headers, blocks writes, and never opens a sign-out link", () => {
    const sessions = spa.requests.filter((request) => request.line === "GET /api/session");
    expect(
      sessions.some(
        (request) =>
          request.cookie === "sid=member-session" && request.authorization === "Bearer member-token",
      ),
    ).toBe(true);
    expect(
      sessions.some((request) => request.cookie === undefined && request.authorization === undefined),
    ).toBe(true);
    expect(spa.requests.filter((request) => request.line.startsWith("POST"))).toEqual([]);
    expect(spa.requests.some((request) => request.line.startsWith("GET /logout"))).toBe(false);
    expect(spa.requests.some((request) => request.line === "GET /about")).toBe(true);
  });

  it("turns observed requests into concrete candidates with typed parameters and bodies", () => {
    const candidates = candidatesFromTraffic(traffic.requests);
    const products = candidates.find((candidate) => candidate.path === "/api/products");
    expect(products).toMatchObject({
      method: "GET",
      provenance: "traffic",
      concrete: true,
      roles: ["anonymous", "member"],
      parameters: [
        { name: "limit", in: "query", required: false, schema: { type: "integer" }, example: "20" },
      ],
    });
    expect(candidates.find((candidate) => candidate.path === "/api/analytics/view")?.request_body).toEqual({
      content_type: "application/json",
      required: true,
      schema: { type: "object", properties: { page: { type: "string" }, at: { type: "integer" } } },
    });
  });

  it("stops a role's recording after a run of pages that make no API call (a server-rendered site)", async () => {
    const paths = Array.from({ length: 12 }, (_, index) => `/static-page-${index}`);
    const result = await recordTraffic(
      spa.baseUrl,
      [{ role: "anonymous", headers: async () => ({}), paths }],
      {
        followRenderedLinks: false,
        settleMs: 500,
      },
    );
    expect(result.roles[0]).toMatchObject({ pages: 5, requests: 0, stopped: "no_api_calls" });
  }, 60_000);

  it("loads one page per template: other ids and other query values run the same scripts", async () => {
    const before = spa.requests.length;
    const result = await recordTraffic(
      spa.baseUrl,
      [
        {
          role: "anonymous",
          headers: async () => ({}),
          paths: ["/items/17", "/items/18?tab=a", "/items/19", "/guide?topic=a", "/guide?topic=b", "/about"],
        },
      ],
      { followRenderedLinks: false, settleMs: 500 },
    );
    expect(result.roles[0]?.pages).toBe(3);
    expect(spa.requests.slice(before).map((request) => request.line)).toEqual([
      "GET /items/17",
      "GET /guide?topic=a",
      "GET /about",
    ]);
  }, 60_000);

  it("lets a page's writes through when the target allows them", async () => {
    const before = spa.requests.length;
    const result = await recordTraffic(
      spa.baseUrl,
      [{ role: "anonymous", headers: async () => ({}), paths: ["/"] }],
      { allowWrites: true, followRenderedLinks: false, settleMs: 2000 },
    );
    expect(result.roles[0]?.pages).toBe(1);
    expect(result.requests.find((request) => request.method === "POST")?.sent).toBe(true);
    expect(spa.requests.slice(before).map((request) => request.line)).toContain("POST /api/analytics/view");
  }, 60_000);
});

describe("findChromium", () => {
  it("names QAAS_CHROMIUM when it points at nothing", () => {
    expect(() => findChromium({ QAAS_CHROMIUM: "/nowhere/chromium" })).toThrow(
      /QAAS_CHROMIUM is \/nowhere\/chromium/,
    );
  });

  it("finds the installed Chromium", () => {
    expect(findChromium({ PATH: process.env.PATH })).toMatch(/chrom/);
  });

  it("prefers the headless shell to the full browser, wherever each lies on PATH", () => {
    const bins = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-chromium-"));
    const [early, late] = [path.join(bins, "early"), path.join(bins, "late")];
    for (const [folder, name] of [
      [early, "chromium"],
      [late, "chromium-headless-shell"],
    ] as const) {
      fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, name), "#!/bin/sh\n", { mode: 0o755 });
    }
    try {
      const found = findChromium({ PATH: [early, late].join(path.delimiter) }, []);
      expect(found).toBe(path.join(late, "chromium-headless-shell"));
      fs.rmSync(path.join(late, "chromium-headless-shell"));
      expect(findChromium({ PATH: [early, late].join(path.delimiter) }, [])).toBe(
        path.join(early, "chromium"),
      );
      expect(() => findChromium({ PATH: late }, [])).toThrow(/apt-get install -y chromium-headless-shell/);
    } finally {
      fs.rmSync(bins, { recursive: true, force: true });
    }
  });
});
