import { describe, expect, it } from "vitest";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import {
  fastifyApp,
  honoApp,
  koaApp,
  nestApp,
  nodeHttpApp,
} from "../fixtures/route-apps/javascript-frameworks.ts";
import { bodyProperties, bodyRequired, parametersOf, routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { signatures, writeTree } from "./write-tree.ts";

const scan = (files: Record<string, string>) => scanSourceRoutes(writeTree(files)).routes;

describe("parameters and bodies in JavaScript frameworks", () => {
  it("Koa: a child router mounted with router.use under a prefixed router, ctx reads", () => {
    const routes = scan(koaApp);
    expect(signatures(routes)).toEqual(["GET /api/posts", "POST /api/posts/{postId}/comments"]);
    expect(parametersOf(routeAt(routes, "GET /api/posts"))).toEqual({
      "query:page": { type: "number" },
      "query:tag": { type: "string" },
    });
    const comment = routeAt(routes, "POST /api/posts/{postId}/comments");
    expect(bodyProperties(comment)).toEqual({ text: { type: "string" }, rating: { type: "integer" } });
    // koa-bodyparser takes JSON and forms alike: the encoding is not visible.
    expect(comment.request_body?.content_type).toBeUndefined();
    expect(parametersOf(comment)).toEqual({
      "header:X-Token": { type: "string" },
      "cookie:visitor": { type: "string" },
    });
  });

  it("Fastify: nested plugins with prefixes, route schemas (TypeBox and JSON Schema literals)", () => {
    const routes = scan(fastifyApp);
    expect(signatures(routes)).toEqual([
      "GET /health",
      "GET /v2/accounts",
      "GET /v2/accounts/search",
      "POST /v2/accounts/{accountId}/transfers",
    ]);
    const transfer = routeAt(routes, "POST /v2/accounts/{accountId}/transfers");
    expect(transfer.request_body).toEqual({
      content_type: "application/json",
      schema: {
        type: "object",
        properties: {
          to: { type: "string", minLength: 3 },
          amount: { type: "number", minimum: 0.01 },
          memo: { type: "string" },
        },
        required: ["to", "amount"],
      },
    });
    expect(parametersOf(transfer)).toEqual({ "header:x-trace-id": { type: "string" } });
    expect(parametersOf(routeAt(routes, "GET /health"))).toEqual({ "query:verbose": { type: "boolean" } });
    expect(Object.keys(parametersOf(routeAt(routes, "GET /v2/accounts")))).toEqual([
      "query:currency",
      "query:limit",
    ]);
    // A validation helper handed an imported schema and the whole query.
    expect(parametersOf(routeAt(routes, "GET /v2/accounts/search"))).toEqual({
      "query:q!": { type: "string", minLength: 2 },
      "query:limit": { type: "integer", maximum: 50 },
    });
  });

  it("Hono: basePath and app.route, c.req reads, zValidator and c.req.json()", () => {
    const routes = scan(honoApp);
    expect(signatures(routes)).toEqual(["GET /api/books/{id}", "POST /api/signup", "PUT /api/books/{id}"]);
    expect(parametersOf(routeAt(routes, "GET /api/books/{id}"))).toEqual({
      "query:lang": { type: "string" },
      "header:If-None-Match": { type: "string" },
    });
    const signup = routeAt(routes, "POST /api/signup");
    expect(bodyProperties(signup)).toEqual({
      email: { type: "string", format: "email" },
      password: { type: "string", minLength: 8 },
    });
    expect(bodyRequired(signup)).toEqual(["email", "password"]);
    expect(parametersOf(signup)).toEqual({ "cookie:ref": { type: "string" } });
    expect(routeAt(routes, "PUT /api/books/{id}").request_body).toEqual({
      content_type: "application/json",
      schema: { type: "object", properties: { title: { type: "string" }, year: { type: "string" } } },
    });
  });

  it("NestJS: global prefix, URI versions, decorated parameters and a class-validator DTO from another file", () => {
    const routes = scan(nestApp);
    expect(signatures(routes)).toEqual(["GET /api/v1/cats", "GET /api/v2/cats/{id}", "POST /api/v1/cats"]);
    expect(parametersOf(routeAt(routes, "GET /api/v1/cats"))).toEqual({
      "query:limit!": { type: "integer" },
      "query:breed": { type: "string" },
    });
    const create = routeAt(routes, "POST /api/v1/cats");
    expect(create.request_body?.schema).toEqual({
      type: "object",
      properties: {
        name: { type: "string", maxLength: 50 },
        age: { type: "integer", minimum: 0, maximum: 30 },
        color: { type: "string", enum: ["black", "white"] },
        ownerEmail: { type: "string", format: "email" },
      },
      required: ["name", "age", "color"],
    });
    expect(parametersOf(create)).toEqual({ "header:x-request-id": { type: "string" } });
  });

  it("node:http: a [method, pattern, handler] table, if/switch dispatch, and a JSON body read by hand", () => {
    const routes = scan(nodeHttpApp);
    expect(signatures(routes)).toEqual([
      "ALL /api/me",
      "GET /api/notes/{param}",
      "GET /api/search",
      "POST /api/notes",
    ]);
    expect(parametersOf(routeAt(routes, "GET /api/search"))).toEqual({
      "query:q": { type: "string" },
      "query:page": { type: "integer" },
    });
    expect(parametersOf(routeAt(routes, "GET /api/notes/{param}"))).toEqual({
      "query:format": { type: "string" },
    });
    expect(parametersOf(routeAt(routes, "ALL /api/me"))).toEqual({
      "header:authorization": { type: "string" },
    });
    expect(routeAt(routes, "POST /api/notes").request_body).toEqual({
      content_type: "application/json",
      schema: { type: "object", properties: { title: { type: "string" }, body: { type: "string" } } },
    });
  });

  it("Next.js: pages/api handlers and app-router exports read like any handler", () => {
    const routes = scan({
      "package.json": JSON.stringify({ dependencies: { next: "15" } }),
      "pages/api/users/[userId].ts": String.raw`
        export default function handler(req, res) {
          if (req.method === "PATCH") return res.json({ nick: req.body.nickname });
          return res.json({ expand: req.query.expand });
        }
      `,
      "app/api/search/route.ts": String.raw`
        import { NextRequest } from "next/server";
        export async function GET(request: NextRequest) {
          const term = request.nextUrl.searchParams.get("term");
          return Response.json({ term, lang: request.headers.get("accept-language") });
        }
        export async function POST(request: Request) {
          const form = await request.formData();
          return Response.json({ name: form.get("name") });
        }
      `,
    });
    expect(signatures(routes)).toEqual(["GET /api/search", "PATCH /api/users/{userId}", "POST /api/search"]);
    expect(parametersOf(routeAt(routes, "GET /api/search"))).toEqual({
      "query:term": { type: "string" },
      "header:accept-language": { type: "string" },
    });
    expect(routeAt(routes, "POST /api/search").request_body).toEqual({
      content_type: "application/x-www-form-urlencoded",
      schema: { type: "object", properties: { name: { type: "string" } } },
    });
    const patch = routeAt(routes, "PATCH /api/users/{userId}");
    expect(bodyProperties(patch)).toEqual({ nickname: { type: "string" } });
    expect(parametersOf(patch)).toEqual({ "query:expand": { type: "string" } });
  });
});
