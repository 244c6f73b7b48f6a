import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import type { Operation } from "../../src/map/system-map.ts";
import { probeOpenRedirectTool } from "../../src/tools/servers/injection-server.ts";
import { probeXssTool } from "../../src/tools/servers/security-server.ts";
import type { ToolDefinition } from "../../src/tools/tool.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { callTool } from "../support/fake-run-context.ts";
import type { ShopApp } from "./shop-app.ts";
import { SHOP_USERS, startShopApp } from "./shop-app.ts";

// A server-rendered app known only from its pages (no API document), signed into with a form: the stored
// XSS sits behind a form whose handler needs every field (a read-only price, a strictly checked email) and
// shows on a page listing only the viewer's own orders; the open redirect happens only after a successful
// sign-in. The safe build of the same app must stay unflagged.

let vulnerable: ShopApp;
let safe: ShopApp;

beforeAll(async () => {
  process.env.QAAS_TEST_SHOP_ADA = SHOP_USERS.ada.password;
  process.env.QAAS_TEST_SHOP_BO = SHOP_USERS.bo.password;
  [vulnerable, safe] = await Promise.all([
    startShopApp({ vulnerable: true }),
    startShopApp({ vulnerable: false }),
  ]);
});
afterAll(async () => {
  await Promise.all([vulnerable.close(), safe.close()]);
});

const form = (page: string) => ({ page, enctype: "application/x-www-form-urlencoded" });

function operation(method: string, path: string, extra: Partial<Operation>): Operation {
  return {
    method,
    path,
    security: "unknown",
    parameters: [],
    responses: {},
    seen_in: ["form"],
    documented: false,
    ...extra,
  };
}

const query = (name: string) => ({ name, in: "query" as const, required: false, schema: { type: "string" } });

function shopOperations(): Operation[] {
  return [
    operation("GET", "/login", { parameters: [query("next")], roles: ["anonymous"], seen_in: ["link"] }),
    operation("POST", "/login", {
      roles: ["anonymous"],
      form: form("/login?next=/"),
      request_body: {
        content_type: "application/x-www-form-urlencoded",
        required: true,
        schema: {
          type: "object",
          properties: {
            username: { type: "string" },
            password: { type: "string" },
            next: { type: "string" },
          },
          required: ["username", "password"],
        },
      },
    }),
    operation("GET", "/continue", { parameters: [query("to")], roles: ["anonymous"], seen_in: ["link"] }),
    operation("POST", "/orders", {
      roles: ["admin"],
      form: form("/orders/new"),
      request_body: {
        content_type: "application/x-www-form-urlencoded",
        required: true,
        schema: {
          type: "object",
          properties: {
            mail: { type: "string", format: "email" },
            note: { type: "string" },
            price: { type: "string", default: "12€" },
          },
          required: ["mail", "note"],
        },
      },
    }),
    operation("GET", "/orders/mine", { roles: ["admin", "user"], seen_in: ["link"] }),
  ];
}

async function probe(tool: ToolDefinition, app: ShopApp): Promise<EnvelopeDraft[]> {
  const profile = profileFor({
    name: "shop",
    source: {},
    environment: { mode: "external", base_url: app.baseUrl, allow_writes: true },
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
      { name: "ada", role: "admin", username: "ada", password: "secret_ref:QAAS_TEST_SHOP_ADA" },
      { name: "bo", role: "user", username: "bo", password: "secret_ref:QAAS_TEST_SHOP_BO" },
    ],
  });
  const map = systemMapFor({
    target: "shop",
    baseUrl: app.baseUrl,
    document: { openapi: "3.0.3", info: { title: "none", version: "0" }, paths: {} },
    extraOperations: shopOperations(),
  });
  map.openapi = null;
  const result = await callTool(tool, {}, probeContext({ profile, map, agent: "AUDITOR" }));
  if (!result.ok) throw new Error(result.error);
  const { candidates } = result.data as { candidates: EnvelopeDraft[] };
  for (const candidate of candidates) EnvelopeDraftSchema.parse(candidate);
  return candidates;
}

describe("server-rendered forms: every field submitted, pages read as the user who wrote", () => {
  it("finds the stored XSS behind a form that needs its read-only field and a strict email", async () => {
    const titles = (await probe(probeXssTool, vulnerable)).map((candidate) => candidate.title);
    expect(titles).toContain(
      "Stored XSS: body note saved through POST /orders renders unescaped at /orders/mine",
    );
    // The order went through as a browser sends it: the page's read-only price, an address the strict
    // pattern accepts, by the only role allowed to order.
    const planted = vulnerable.orders.find((order) => order.note.includes("<qaas-xss-"));
    expect(planted).toMatchObject({ user: "ada", price: "12€" });
    expect(planted?.mail).toMatch(/@example\.com$/);
  }, 60_000);

  it("leaves the escaping build alone", async () => {
    expect(await probe(probeXssTool, safe)).toEqual([]);
    expect(safe.orders.some((order) => order.note.includes("<qaas-xss-"))).toBe(true);
  }, 60_000);
});

describe("open redirect after a form sign-in", () => {
  it("submits the profile user's own credentials beside the redirect target", async () => {
    const candidates = await probe(probeOpenRedirectTool, vulnerable);
    expect(candidates.map((candidate) => candidate.title)).toEqual([
      "Open redirect through body next of POST /login (absolute URL)",
    ]);
    expect(candidates[0]!.summary).toMatch(/sign-in credentials of the profile's user/);
  }, 60_000);

  it("flags neither a sign-in that keeps `next` on its origin nor `https:host` an https allow-list lets through", async () => {
    expect(await probe(probeOpenRedirectTool, safe)).toEqual([]);
  }, 60_000);
});
