import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation, Page, SystemMap } from "../../src/map/system-map.ts";
import { fixedPrices, numberPattern } from "../../src/probes/api/client-price.ts";
import {
  probeContext,
  undocumentedMap,
  undocumentedPost,
  writableProfile,
} from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { fuzzCandidates, runGeneratedTest } from "../support/fuzz-run.ts";
import { startTextServer, type TextServer } from "../support/text-server.ts";

// A shop whose order forms show a price the buyer cannot change. The careless shop stores the price the
// request names; the careful one works it out from the product; the checking one refuses any other price.
// Its orders page prints prices grouped by thousands, as a shop formats money. A `/logout` page signs out
// on GET: a probe reading pages must never visit it.

const UNIT_PRICE = 12;

let server: TextServer;
let baseUrl: string;
let careless = true;
const seen: string[] = [];
const orders: Array<{ shop: string; price: number }> = [];

function form(shop: string, scripted: boolean): string {
  const head = scripted ? `<form id="buy-${shop}">` : `<form method="post" action="/api/${shop}/orders">`;
  return `${head}<input type="email" name="mail" required>
    <input type="text" name="price" value="${UNIT_PRICE}€" readonly>
    <input type="hidden" name="product_id" value="3"><button>Buy</button></form>`;
}

beforeAll(async () => {
  server = await startTextServer((request, text, response) => {
    const url = request.url ?? "";
    seen.push(`${request.method} ${url}`);
    const html = (body: string) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(`<html><body>${body}</body></html>`);
    };
    if (request.method === "GET" && url === "/shop")
      return html(`${form("careless", true)}${form("careful", false)}${form("checking", false)}
        <a href="/orders">Your orders</a> <a href="/logout">Sign out</a>`);
    if (request.method === "GET" && url === "/orders")
      return html(
        orders.map((order) => `<p>${order.shop}: ${order.price.toLocaleString("en-US")} €</p>`).join(""),
      );
    if (request.method === "GET" && url === "/logout") return html("signed out");
    const create = url.match(/^\/api\/(careless|careful|checking)\/orders$/);
    if (request.method !== "POST" || !create) {
      response.writeHead(404);
      return response.end();
    }
    const body = new URLSearchParams(text);
    const sent = Number.parseInt(body.get("price") ?? "", 10);
    if (!body.get("mail") || body.get("product_id") !== "3" || !Number.isFinite(sent)) {
      response.writeHead(400, { "content-type": "application/json" });
      return response.end(JSON.stringify({ error: "mail, product_id and price are required" }));
    }
    const shop = create[1]!;
    if (shop === "checking" && sent !== UNIT_PRICE) {
      response.writeHead(400, { "content-type": "application/json" });
      return response.end(JSON.stringify({ error: "the price has changed" }));
    }
    orders.push({ shop, price: shop === "careless" && careless ? sent : UNIT_PRICE });
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ message: "Order placed" }));
  });
  baseUrl = server.baseUrl;
});
afterAll(() => server.close());

function orderOperation(shop: string): Operation {
  return undocumentedPost(
    `/api/${shop}/orders`,
    "application/x-www-form-urlencoded",
    {
      mail: { type: "string", format: "email" },
      price: { type: "string", default: `${UNIT_PRICE}€` },
      product_id: { type: "string", default: "3" },
    },
    ["mail"],
  );
}

function shopPage(): Page {
  const inputs = [
    { name: "mail", type: "email", required: true },
    { name: "price", type: "text", required: false, value: `${UNIT_PRICE}€`, readonly: true },
    { name: "product_id", type: "hidden", required: false, value: "3" },
  ];
  const fields = inputs.map((input) => input.name);
  return {
    path: "/shop",
    status: 200,
    html: true,
    links: ["/orders", "/logout"],
    forms: [
      { action: "/shop", method: "GET", fields, inputs, scripted: true },
      ...["careful", "checking"].map((shop) => ({
        action: `/api/${shop}/orders`,
        method: "POST",
        fields,
        inputs,
      })),
    ],
  } as Page;
}

function shopMap(): SystemMap {
  const map = undocumentedMap(
    "shop",
    baseUrl,
    ["careless", "careful", "checking"].map((shop) => orderOperation(shop)),
  );
  const page = (pagePath: string): Page => ({
    path: pagePath,
    status: 200,
    html: true,
    links: [],
    forms: [],
  });
  return { ...map, pages: [shopPage(), page("/orders"), page("/logout")] };
}

describe("a price the page fixes, taken from the request", () => {
  it("is found in scripted and posted forms alike, only in hidden or read-only money fields", () => {
    const map = shopMap();
    for (const operation of map.operations)
      expect(fixedPrices(map, operation).map((fixed) => fixed.control.name)).toEqual(["price"]);
    const editable = shopPage();
    for (const entry of editable.forms)
      entry.inputs = entry.inputs?.map((input) => ({ ...input, readonly: false }));
    expect(fixedPrices({ ...map, pages: [editable] }, map.operations[0]!)).toEqual([]);
  });

  it("reads a number grouped by thousands, never one inside a longer number", () => {
    for (const written of ["482193", "482,193.00", "482.193", "482 193", "482\u202f193"])
      expect(numberPattern("482193").test(`total ${written} €`)).toBe(true);
    for (const written of ["1482193", "4821930", "482,1934"])
      expect(numberPattern("482193").test(`total ${written}`)).toBe(false);
  });

  it("fuzz_operation flags the shop storing the client's price, not one computing or checking it", async () => {
    const profile = writableProfile("shop", baseUrl);
    const context = probeContext({ profile, map: shopMap() });
    const drafts = await fuzzCandidates(context);
    expect(summarize(drafts).filter((line) => line.includes("client-price"))).toEqual([
      "validation-missing POST /api/careless/orders [client-price:price]",
    ]);
    expect(seen).toContain("GET /orders");
    expect(seen).not.toContain("GET /logout");

    // The generated test fails while the shop stores the client's price, and passes once it does not.
    const finding = drafts.find((draft) => draft.dedupe?.discriminator === "client-price:price")!;
    const run = () => runGeneratedTest(context, finding, baseUrl);
    expect(await run()).toMatch(/^failed: [\s\S]*must not show the price the request named/);
    careless = false;
    expect(await run()).toBe("passed");
  });
});
