import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SystemMapSchema } from "../../src/map/system-map.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { LoadedTarget } from "../../src/tools/context.ts";
import { composeSystemMap, mapDraft } from "../../src/tools/servers/map-draft.ts";
import { mapWebTools } from "../../src/tools/servers/map-web-tools.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import { type ShopServer, startShopServer } from "./crawl-shop-server.ts";
import { type SpaServer, startSpaServer } from "./frontend-spa-server.ts";

let shop: ShopServer;
let spa: SpaServer;

beforeAll(async () => {
  shop = await startShopServer();
  spa = await startSpaServer();
  process.env.CRAWL_TEST_ALICE_PW = "alice-pw";
  process.env.CRAWL_TEST_ADAM_PW = "adam-pw";
});

afterAll(async () => {
  await shop.close();
  await spa.close();
});

const tool = (name: string) => mapWebTools.find((entry) => entry.name === name)!;

function target(profile: Record<string, unknown>): LoadedTarget {
  return {
    profile: TargetProfileSchema.parse({ source: {}, ui: { entry: "/" }, ...profile }),
    file: "/nowhere/profile.yaml",
    root: undefined,
    goldenLedger: undefined,
  };
}

describe("map_pages", () => {
  it("crawls as anonymous and one signed-in user per role through the run's sessions", async () => {
    const context = fakeRunContext({
      target: target({
        name: "shop",
        environment: { mode: "external", base_url: shop.baseUrl },
        api: { exclude: ["GET /account/orders"] },
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
          { name: "admin_1", role: "admin", username: "adam", password: "secret_ref:CRAWL_TEST_ADAM_PW" },
          { name: "member_1", role: "member", username: "alice", password: "secret_ref:CRAWL_TEST_ALICE_PW" },
          { name: "member_2", role: "member", username: "alice", password: "secret_ref:CRAWL_TEST_ALICE_PW" },
        ],
      }),
    });
    const result = await callTool(tool("map_pages"), {}, context);
    expect(result.ok).toBe(true);
    const data = (result as { data: Record<string, unknown> }).data;
    expect(data.roles).toEqual({
      anonymous: { pages: expect.any(Number) },
      member: { user: "member_1", pages: expect.any(Number) },
      admin: { user: "admin_1", pages: expect.any(Number) },
    });
    expect(data.forms_with_csrf).toBe(5);
    // The profile's excluded operation is never requested, sign-out never followed.
    expect(shop.requests.filter((request) => request.startsWith("GET /account/orders"))).toEqual([]);
    expect(shop.loggedOut).toBe(0);

    const draft = mapDraft(context);
    expect(draft.pages.find((page) => page.path === "/admin/users")?.roles).toEqual(["admin"]);
    expect(draft.pages.some((page) => "inline_scripts" in page || "csrf" in page)).toBe(false);
    const cart = draft.candidates.get("pages")?.find((candidate) => candidate.path === "/cart");
    expect(cart).toMatchObject({ method: "POST", form: { csrf_field: "authenticity_token" } });

    const map = SystemMapSchema.parse(
      composeSystemMap(draft, context.target!, { commit: null, createdAt: new Date().toISOString() }),
    );
    expect(map.operations.find((operation) => operation.path === "/account/profile")).toMatchObject({
      method: "POST",
      seen_in: ["form"],
      roles: ["member", "admin"],
      request_body: { content_type: "multipart/form-data" },
    });
  });

  it("crawls from the site root when the profile has no ui section, and an API-only root costs no error", async () => {
    const withoutUi = (baseUrl: string) =>
      fakeRunContext({
        target: {
          ...target({ name: "no-ui", environment: { mode: "external", base_url: baseUrl } }),
          profile: TargetProfileSchema.parse({
            name: "no-ui",
            source: {},
            environment: { mode: "external", base_url: baseUrl },
          }),
        },
      });
    const served = await callTool(tool("map_pages"), { roles: ["anonymous"] }, withoutUi(shop.baseUrl));
    expect(served).toMatchObject({ ok: true, data: { pages: expect.any(Number) } });
    expect((served as { data: { pages: number } }).data.pages).toBeGreaterThan(1);

    const api = http.createServer((_request, response) => {
      response.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = api.address() as AddressInfo;
      const apiOnly = await callTool(
        tool("map_pages"),
        { roles: ["anonymous"] },
        withoutUi(`http://127.0.0.1:${port}`),
      );
      expect(apiOnly).toMatchObject({
        ok: true,
        data: { by_status: { "404": 1 }, operations: { forms: 0, links: 0 } },
      });
    } finally {
      api.close();
    }
  });
});

describe("a static target", () => {
  it("is skipped by every web reader with the reason in the map's notes", async () => {
    const context = fakeRunContext({ target: target({ name: "static", environment: { mode: "none" } }) });
    for (const name of ["map_pages", "map_frontend", "map_traffic"]) {
      const result = await callTool(tool(name), {}, context);
      expect(result).toMatchObject({ ok: true, data: { skipped: true } });
    }
    expect([...mapDraft(context).notes.values()].flat()).toEqual([
      "the target is not live (environment.mode none or no base_url): pages not crawled",
      "the target is not live (environment.mode none or no base_url): frontend scripts not read",
      "the target is not live (environment.mode none or no base_url): traffic not recorded",
    ]);
  });
});

describe("map_frontend and map_traffic", () => {
  it("read the crawled pages' bundle and the requests they make in Chromium", async () => {
    const context = fakeRunContext({
      target: target({ name: "storefront", environment: { mode: "external", base_url: spa.baseUrl } }),
    });
    expect((await callTool(tool("map_pages"), {}, context)).ok).toBe(true);
    const frontend = await callTool(tool("map_frontend"), {}, context);
    expect(frontend).toMatchObject({
      ok: true,
      data: { scripts: 1, source_maps: ["/static/app.min.js.map: 1 of 1 files read"], operations: 15 },
    });
    const traffic = await callTool(tool("map_traffic"), { max_pages: 1, settle_ms: 1500 }, context);
    expect(traffic).toMatchObject({ ok: true, data: { roles: { anonymous: { pages: 1 } } } });
    const observed = mapDraft(context).candidates.get("traffic") ?? [];
    expect(observed.map((candidate) => `${candidate.method} ${candidate.path}`).sort()).toEqual([
      "GET /api/products",
      "GET /api/session",
      "POST /api/analytics/view",
    ]);
    // An external target without allow_writes: the page's write was recorded, not sent.
    expect(spa.requests.some((request) => request.line.startsWith("POST"))).toBe(false);
    expect(mapDraft(context).notes.get("traffic")?.[0]).toMatch(/recorded but not sent/);
  }, 120_000);

  it("open no browser when no crawled page loads a script", async () => {
    const context = fakeRunContext({
      target: target({ name: "shop", environment: { mode: "external", base_url: shop.baseUrl } }),
    });
    expect((await callTool(tool("map_pages"), {}, context)).ok).toBe(true);
    const before = shop.requests.length;
    const traffic = await callTool(tool("map_traffic"), {}, context);
    expect(traffic).toMatchObject({
      ok: true,
      data: { skipped: true, reason: expect.stringMatching(/no crawled page loads a script/) },
    });
    expect(shop.requests.length).toBe(before);
  });
});
