import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ResourceFactory } from "../../src/probes/api/resource-factory.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// An order line needs a product code the server knows. The catalogue that lists the codes is one of many
// parameterless reads, and not among the first few the map holds.

let server: http.Server;
let baseUrl: string;
let listReads = 0;

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    const json = (status: number, body: unknown) =>
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const url = request.url ?? "/";
    if (url === "/zz/catalogue") return json(200, [{ sku: "SKU-7781", price: 12 }]);
    if (url === "/aa/alerts") return json(200, [{ sku: "ALERT 4", level: "high" }]);
    if (url.startsWith("/lists/")) {
      listReads += 1;
      return json(200, [{ id: 1, note: "x" }]);
    }
    if (url === "/order-lines" && request.method === "POST") {
      let text = "";
      for await (const chunk of request) text += chunk;
      const body = JSON.parse(text || "{}") as { sku?: string; quantity?: number };
      if (body.sku !== "SKU-7781") return json(400, { error: "unknown sku" });
      return json(201, { id: 5, sku: body.sku, quantity: body.quantity });
    }
    if (url === "/order-lines/5") return json(200, { id: 5, sku: "SKU-7781" });
    return json(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function ordersMap(lists: number, catalogueAnswer: Record<string, unknown>) {
  const read = { get: { responses: { "200": { description: "rows" } } } };
  const paths: Record<string, unknown> = {};
  for (let index = 0; index < lists; index += 1) paths[`/lists/l${String(index).padStart(3, "0")}`] = read;
  // Another list whose items carry a field of the same name, meaning something else.
  paths["/aa/alerts"] = { get: { responses: { "200": catalogueAnswer } } };
  paths["/zz/catalogue"] = { get: { responses: { "200": catalogueAnswer } } };
  paths["/order-lines"] = {
    post: {
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["sku", "quantity"],
              properties: { sku: { type: "string" }, quantity: { type: "integer", minimum: 1 } },
            },
          },
        },
      },
      responses: { "201": { description: "created" } },
    },
  };
  paths["/order-lines/{id}"] = {
    get: {
      parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
      responses: { "200": { description: "one" } },
    },
  };
  const document = { openapi: "3.0.3", info: { title: "orders", version: "1" }, paths };
  return systemMapFor({ target: "orders", baseUrl, document });
}

function openOrdersRun(lists: number, catalogueAnswer: Record<string, unknown>) {
  const profile = profileFor({
    name: "orders",
    source: {},
    environment: { mode: "managed", base_url: baseUrl, allow_writes: true },
  });
  const run = openProbeRun(probeContext({ profile, map: ordersMap(lists, catalogueAnswer) }), "seen-values");
  if (typeof run === "string") throw new Error(run);
  return run;
}

function createOrderLineIn(run: Exclude<ReturnType<typeof openOrdersRun>, string>) {
  const factory = new ResourceFactory(run);
  const family = factory.families.find((candidate) => candidate.collection === "/order-lines")!;
  return factory.create(family, undefined);
}

function createOrderLine(lists: number, catalogueAnswer: Record<string, unknown>) {
  return createOrderLineIn(openOrdersRun(lists, catalogueAnswer));
}

describe("values a create must reuse", () => {
  it("come from the application's lists, the catalogue among many", async () => {
    const created = await createOrderLine(40, { description: "rows" });
    expect(created?.exchange.response?.status).toBe(201);
  });

  it("come first from the lists whose documented answer names the field, past the reading cap, trying each such list", async () => {
    listReads = 0;
    const created = await createOrderLine(100, {
      description: "products",
      content: {
        "application/json": {
          schema: {
            type: "array",
            items: { type: "object", properties: { sku: { type: "string" }, price: { type: "integer" } } },
          },
        },
      },
    });
    expect(created?.exchange.response?.status).toBe(201);
    expect(listReads).toBe(0);
  });

  it("are read once per run, however many probes (each with its own factory) create", async () => {
    const run = openOrdersRun(10, { description: "rows" });
    listReads = 0;
    expect((await createOrderLineIn(run))?.exchange.response?.status).toBe(201);
    const firstReads = listReads;
    expect(firstReads).toBeGreaterThan(0);
    expect((await createOrderLineIn(run))?.exchange.response?.status).toBe(201);
    expect(listReads).toBe(firstReads);
  });
});
