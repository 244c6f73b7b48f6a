import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import {
  probeContext,
  undocumented,
  undocumentedMap,
  undocumentedPost,
  writableProfile,
} from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { fuzzCandidates, runGeneratedTest } from "../support/fuzz-run.ts";
import { startTextServer, type TextServer } from "../support/text-server.ts";

// A JSON shop: a catalogue serves each product's price, and orders name a product and carry a price.
// The careless shop stores the price the request names; the careful one takes the catalogue's; the
// checking one refuses any other. An offer names a product and a price the buyer chooses (the figure is
// theirs by design), and an editor creates products with their price: neither is a client-chosen price.

const PRICE = 12.5;

let server: TextServer;
let baseUrl: string;
let careless = true;
const orders: Array<{ id: number; shop: string; product_id: number; price: number }> = [];

beforeAll(async () => {
  server = await startTextServer((request, text, response) => {
    const url = request.url ?? "";
    const send = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    if (request.method === "GET" && url === "/api/products")
      return send(200, { items: [{ id: 3, name: "Lamp", price: PRICE }] });
    // Another shop's catalogue, farther from the orders: its figures are not this shop's.
    if (request.method === "GET" && url === "/v2/store/products")
      return send(200, [{ id: 3, name: "Lamp", price: 99 }]);
    const read = url.match(/^\/api\/(careless|careful|checking)\/orders\/(\d+)$/);
    if (request.method === "GET" && read) {
      const order = orders.find((entry) => entry.shop === read[1] && entry.id === Number(read[2]));
      return order ? send(200, order) : send(404, { error: "no such order" });
    }
    if (request.method !== "POST") return send(404, { error: "not found" });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text || "{}");
    } catch {
      return send(400, { error: "JSON expected" });
    }
    if (url === "/api/products") return send(201, { id: 9, name: body.name, price: body.price });
    if (url === "/api/offers")
      return send(201, { id: orders.length + 100, product_id: body.product_id, price: body.price });
    const create = url.match(/^\/api\/(careless|careful|checking)\/orders$/);
    if (!create) return send(404, { error: "not found" });
    if (body.product_id !== 3) return send(400, { error: "unknown product" });
    const sent = Number(body.price);
    if (!Number.isFinite(sent)) return send(400, { error: "price must be a number" });
    const shop = create[1]!;
    if (shop === "checking" && sent !== PRICE) return send(409, { error: "the price has changed" });
    const price = shop === "careless" && careless ? sent : PRICE;
    const order = { id: orders.length + 1, shop, product_id: 3, price };
    orders.push(order);
    send(201, { order });
  });
  baseUrl = server.baseUrl;
});
afterAll(() => server.close());

function shopOperations(): Operation[] {
  const order = { product_id: { type: "integer" }, price: { type: "number" } };
  return [
    undocumented("GET", "/v2/store/products"),
    undocumented("GET", "/api/products"),
    undocumentedPost(
      "/api/products",
      "application/json",
      { name: { type: "string" }, price: { type: "number" } },
      ["name", "price"],
    ),
    undocumentedPost("/api/offers", "application/json", order, ["product_id", "price"]),
    ...["careless", "careful", "checking"].flatMap((shop) => [
      // The careless shop's price is optional in its schema: the probe still finds it there.
      undocumentedPost(
        `/api/${shop}/orders`,
        "application/json",
        order,
        shop === "careless" ? ["product_id"] : ["product_id", "price"],
      ),
      undocumented("GET", `/api/${shop}/orders/{id}`),
    ]),
  ];
}

describe("a catalogue price taken from a JSON request", () => {
  it("fuzz_operation flags the shop storing the client's price, not one taking or checking the catalogue's, nor an offer or a product", async () => {
    const profile = writableProfile("shop", baseUrl);
    const context = probeContext({ profile, map: undocumentedMap("shop", baseUrl, shopOperations()) });
    const drafts = await fuzzCandidates(context);
    expect(summarize(drafts).filter((line) => line.includes("client-price"))).toEqual([
      "validation-missing POST /api/careless/orders [client-price:price]",
    ]);

    // The generated test reads the order back: it fails while the shop stores the client's price, and
    // passes once it takes the catalogue's.
    const finding = drafts.find((draft) => draft.dedupe?.discriminator === "client-price:price")!;
    expect(finding.title).toMatch(/stored where \/api\/products prices product_id 3 at 12\.5$/);
    const run = () => runGeneratedTest(context, finding, baseUrl);
    expect(await run()).toMatch(/^failed: [\s\S]*the stored price must be the catalogue's/);
    careless = false;
    expect(await run()).toBe("passed");
  });
});
