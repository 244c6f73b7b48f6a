import { beforeAll, describe, expect, it } from "vitest";
import type { Route } from "../../src/map/system-map.ts";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import { expressShop } from "../fixtures/route-apps/express-shop.ts";
import { bodyProperties, bodyRequired, parametersOf, routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { signatures, writeTree } from "./write-tree.ts";

describe("an Express app with routers nested across files", () => {
  let routes: Route[];
  beforeAll(() => {
    routes = scanSourceRoutes(writeTree(expressShop)).routes;
  });

  it("resolves every mount prefix: nested routers, middleware before the router, arrays, '' and ESM defaults", () => {
    expect(signatures(routes)).toEqual([
      "GET /admin/audit",
      "GET /api/v1/orders/{orderId}",
      "GET /api/v1/users",
      "GET /api/v1/users/{id}",
      "GET /search",
      "POST /admin/reports",
      "POST /api/v1/orders",
      "POST /api/v1/users",
      "POST /files/upload",
      "PUT /api/v1/users/{id}",
    ]);
  });

  it("reads query parameters from validators, destructuring with defaults and bracket access in a controller", () => {
    expect(parametersOf(routeAt(routes, "GET /api/v1/users"))).toEqual({
      "query:page": { type: "integer", minimum: 1 },
      "query:sort": { type: "string" },
      "query:limit": { type: "integer" },
      "query:q": { type: "string" },
    });
    expect(parametersOf(routeAt(routes, "GET /api/v1/users/{id}"))).toEqual({
      "query:fields": { type: "string" },
    });
  });

  it("reads body fields (nested ones too), headers, cookies and req.get from handlers one import away", () => {
    const create = routeAt(routes, "POST /api/v1/users");
    expect(create.request_body?.content_type).toBe("application/json");
    expect(bodyProperties(create)).toEqual({
      email: { type: "string", format: "email" },
      age: { type: "integer", minimum: 0, maximum: 150 },
      name: { type: "string" },
      address: { type: "object", properties: { city: { type: "string" } } },
      newsletter: { type: "boolean" },
      interests: { type: "array" },
    });
    expect(bodyRequired(create)).toEqual(["email"]);
    expect(parametersOf(create)).toEqual({ "header:x-api-key": { type: "string" } });

    const update = routeAt(routes, "PUT /api/v1/users/{id}");
    expect(bodyProperties(update)).toEqual({ tags: { type: "array" }, nickname: { type: "string" } });
    expect(parametersOf(update)).toEqual({
      "cookie:session": { type: "string" },
      "header:Accept-Language": { type: "string" },
    });
  });

  it("turns zod and joi schemas a route validates with into JSON Schema", () => {
    const order = routeAt(routes, "POST /api/v1/orders");
    expect(order.request_body?.schema).toEqual({
      type: "object",
      properties: {
        productId: { type: "string", format: "uuid" },
        quantity: { type: "integer", minimum: 1, maximum: 10 },
        note: { type: "string", maxLength: 200 },
        status: { type: "string", enum: ["new", "paid"] },
      },
      required: ["productId", "quantity", "status"],
    });
    const report = routeAt(routes, "POST /admin/reports");
    expect(bodyProperties(report)).toEqual({
      from: { type: "string", format: "date-time" },
      kind: { type: "string", enum: ["daily", "weekly"] },
      limit: { type: "integer", minimum: 1 },
    });
    expect(bodyRequired(report)).toEqual(["from", "kind"]);
  });

  it("reads hand-parsed query strings and types conversions", () => {
    expect(parametersOf(routeAt(routes, "GET /admin/audit"))).toEqual({
      "query:user": { type: "string" },
      "query:since": { type: "number" },
    });
    expect(parametersOf(routeAt(routes, "GET /api/v1/orders/{orderId}"))).toEqual({
      "query:detail": { type: "integer" },
    });
    expect(parametersOf(routeAt(routes, "GET /search"))).toEqual({ "query:term": { type: "string" } });
  });

  it("sees a multer upload as a multipart body with its file field", () => {
    const upload = routeAt(routes, "POST /files/upload");
    expect(upload.request_body?.content_type).toBe("multipart/form-data");
    expect(bodyProperties(upload)).toEqual({
      avatar: { type: "string", format: "binary" },
      title: { type: "string" },
    });
  });
});

describe("a length check on a body field", () => {
  it("says the value has a length, not that it is a number; a comparison of the value itself still does", () => {
    const root = writeTree({
      "package.json": JSON.stringify({ dependencies: { fastify: "4" } }),
      "app.mjs": String.raw`
import Fastify from "fastify";
const app = Fastify();
app.post("/api/notes", async (request, reply) => {
  const title = (request.body ?? {}).title;
  if (typeof title !== "string" || title.length === 0 || title.length > 80) return reply.code(400).send({});
  if (request.body.summary.length > 200) return reply.code(400).send({});
  if (request.body.priority > 3) return reply.code(400).send({});
  return reply.code(201).send({ title });
});
`,
    });
    const [route] = scanSourceRoutes(root).routes;
    expect(bodyProperties(route!)).toEqual({
      title: { type: "string" },
      summary: { type: "string" },
      priority: { type: "number" },
    });
  });
});

describe("a body field read through a name or a merge", () => {
  it("types it from how the name is used, and reads the fields of a record merged with the body", () => {
    const root = writeTree({
      "package.json": JSON.stringify({ dependencies: { fastify: "4" } }),
      "app.mjs": String.raw`
import Fastify from "fastify";
const app = Fastify();
app.post("/api/payments", async (request, reply) => {
  const amount = (request.body ?? {}).amount;
  const tip = request.body.tip;
  if (!Number.isInteger(amount) || amount < 1 || tip > 100) return reply.code(400).send({});
  return reply.code(201).send({ amount });
});
app.get("/api/lines", async (request) => {
  const size = Number.parseInt(String(request.query["limit"] ?? ""), 10);
  const port = String(request.query.port ?? "");
  return { size, port };
});
app.patch("/api/lines/:id", async (request, reply) => {
  const row = { quantity: 1, unit_price: 5 };
  const b = { ...row, ...(request.body ?? {}) };
  if (!Number.isInteger(b.quantity) || b.unit_price < 0) return reply.code(400).send({});
  return b;
});
`,
    });
    const routes = scanSourceRoutes(root).routes;
    expect(bodyProperties(routeAt(routes, "POST /api/payments"))).toEqual({
      amount: { type: "integer" },
      tip: { type: "number" },
    });
    // Through a fallback and String(…), the conversion still types the read.
    expect(parametersOf(routeAt(routes, "GET /api/lines"))).toEqual({
      "query:limit": { type: "integer" },
      "query:port": { type: "string" },
    });
    expect(bodyProperties(routeAt(routes, "PATCH /api/lines/{id}"))).toEqual({
      quantity: { type: "integer" },
      unit_price: { type: "number" },
    });
  });
});
