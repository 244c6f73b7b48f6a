import { describe, expect, it } from "vitest";
import { findSourceRoutes, findWebSocketPaths } from "../../src/probes/routes/find-source-routes.ts";
import { signatures, writeTree } from "./write-tree.ts";

describe("JavaScript/TypeScript source routes", () => {
  it("reads Express apps, routers mounted across an import, route chains, and ignores fakes", () => {
    const root = writeTree({
      "package.json": JSON.stringify({ dependencies: { express: "4" } }),
      "src/server.js": `
        const express = require("express");
        const usersRouter = require("./routes/users");
        const { adminRouter } = require("./routes/admin");
        const app = express();
        const API = "/api";
        app.use(express.json());
        app.use(API + "/users", usersRouter);
        app.use("/admin", adminRouter);
        app.use("/shared", require("./routes/shared-router"));
        app.get("/health", (req, res) => res.send("ok"));
        app.route("/books/:bookId").get((req, res) => {}).put((req, res) => {});
        app.all("/anything", (req, res) => {});
        app.get(["/alias-one", "/alias-two/:slug"], (req, res) => {});
        // app.get("/commented-out", (req, res) => {});
        /* app.post("/also-commented", handler); */
        const fake = "app.get('/in-a-string', handler)";
        const cache = new Map();
        cache.get("/not-a-route");
        app.listen(3000);
      `,
      "src/routes/users.js": `
        const { Router } = require("express");
        const router = Router();
        router.get("/", (req, res) => {});
        router.get("/:id", (req, res) => {});
        router.delete("/:id(\\\\d+)", (req, res) => {});
        module.exports = router;
      `,
      "src/routes/admin.ts": `
        import express from "express";
        export const adminRouter = express.Router();
        adminRouter.post("/reports", async (req, res) => {});
      `,
      "src/routes/shared-router.js": `
        const express = require("express");
        module.exports = express.Router();
      `,
      "src/routes/extra.js": `
        const shared = require("./shared-router");
        shared.get("/extra/:id", (req, res) => {});
      `,
      "src/api-client.js": `module.exports = { get: (url, callback) => fetch(url).then(callback) };`,
      "src/use-client.js": `
        const client = require("./api-client");
        client.get("/not-served-here", (data) => data);
      `,
      "src/client.ts": `
        import axios from "axios";
        const api = axios.create({ baseURL: "/" });
        export const load = () => api.get("/client-call", (x: unknown) => x);
        export const other = () => axios.post("/client-post", () => {});
      `,
      "tests/server.test.js": `app.get("/from-a-test", (req, res) => {});`,
    });
    expect(signatures(findSourceRoutes(root))).toEqual([
      "ALL /anything",
      "DELETE /api/users/{id}",
      "GET /alias-one",
      "GET /alias-two/{slug}",
      "GET /api/users",
      "GET /api/users/{id}",
      "GET /books/{bookId}",
      "GET /health",
      "GET /shared/extra/{id}",
      "POST /admin/reports",
      "PUT /books/{bookId}",
    ]);
    const health = findSourceRoutes(root).find((route) => route.path === "/health");
    expect(health).toMatchObject({ file: "src/server.js", line: 11, framework: "express" });
  });

  it("reads Fastify routes, route objects, plugins registered with a prefix, and websocket routes", () => {
    const root = writeTree({
      "app.ts": `
        import Fastify from "fastify";
        import itemRoutes from "./plugins/items.js";
        const fastify = Fastify({ logger: true });
        fastify.get("/ping", async () => "pong");
        fastify.route({ method: ["GET", "HEAD"], url: "/status", handler: async () => ({}) });
        fastify.register(itemRoutes, { prefix: "/v1/items" });
        fastify.register(async (instance) => {
          instance.post("/login", async () => ({}));
        }, { prefix: "/auth" });
        fastify.get("/live", { websocket: true }, (socket) => {});
      `,
      "plugins/items.ts": `
        import type { FastifyInstance } from "fastify";
        export default async function items(fastify: FastifyInstance) {
          fastify.get("/", async () => []);
          fastify.patch("/:itemId", { schema: {} }, async () => ({}));
        }
      `,
    });
    expect(signatures(findSourceRoutes(root))).toEqual([
      "GET /ping",
      "GET /status",
      "GET /v1/items",
      "HEAD /status",
      "PATCH /v1/items/{itemId}",
      "POST /auth/login",
    ]);
    expect(findWebSocketPaths(root).map((channel) => channel.path)).toEqual(["/live"]);
  });

  it("reads Hono apps with basePath and sub-apps, and Koa routers with a prefix", () => {
    const root = writeTree({
      "hono/index.ts": `
        import { Hono } from "hono";
        import { upgradeWebSocket } from "hono/cloudflare-workers";
        const app = new Hono();
        const api = app.basePath("/api");
        api.get("/posts/:postId{[0-9]+}", (c) => c.json({}));
        const books = new Hono();
        books.post("/", (c) => c.text("created"));
        app.route("/books", books);
        app.get("/ws", upgradeWebSocket(() => ({})));
        export default app;
      `,
      "koa/server.js": `
        const Koa = require("koa");
        const Router = require("@koa/router");
        const app = new Koa();
        const router = new Router({ prefix: "/shop" });
        router.get("/orders/:orderId", async (ctx) => {});
        router.put("/orders/:orderId", async (ctx) => {});
        app.use(router.routes());
      `,
    });
    const routes = findSourceRoutes(root);
    expect(signatures(routes)).toEqual([
      "GET /api/posts/{postId}",
      "GET /shop/orders/{orderId}",
      "POST /books",
      "PUT /shop/orders/{orderId}",
    ]);
    expect(routes.find((route) => route.path === "/books")?.framework).toBe("hono");
    expect(routes.find((route) => route.path.startsWith("/shop"))?.framework).toBe("koa");
    expect(findWebSocketPaths(root).map((channel) => channel.path)).toEqual(["/ws"]);
  });

  it("reads Next.js API routes from pages/api and app/**/route.ts", () => {
    const root = writeTree({
      "package.json": JSON.stringify({ dependencies: { next: "15", react: "19" } }),
      "pages/api/hello.ts": `export default function handler(req, res) { res.json({}); }`,
      "pages/api/users/[userId].ts": `
        export default function handler(req, res) {
          if (req.method === "GET") return res.json({});
          if (req.method === "DELETE") return res.status(204).end();
        }
      `,
      "src/app/api/items/[itemId]/route.ts": `
        export async function GET() { return Response.json({}); }
        export const PATCH = async () => Response.json({});
        export function helper() {}
      `,
      "src/app/(shop)/api/cart/route.ts": `export async function POST() { return Response.json({}); }`,
      "src/app/_private/api/secret/route.ts": `export async function GET() {}`,
    });
    const routes = findSourceRoutes(root);
    expect(signatures(routes)).toEqual([
      "ALL /api/hello",
      "DELETE /api/users/{userId}",
      "GET /api/items/{itemId}",
      "GET /api/users/{userId}",
      "PATCH /api/items/{itemId}",
      "POST /api/cart",
    ]);
    expect(routes.every((route) => route.framework === "nextjs")).toBe(true);
  });

  it("reads NestJS controllers with a global prefix", () => {
    const root = writeTree({
      "src/main.ts": `
        import { NestFactory } from "@nestjs/core";
        async function bootstrap() {
          const app = await NestFactory.create(AppModule);
          app.setGlobalPrefix("api");
          await app.listen(3000);
        }
      `,
      "src/users/users.controller.ts": `
        import { Controller, Get, Post, Delete, Param } from "@nestjs/common";
        @Controller("users")
        export class UsersController {
          @Get()
          list() { return []; }
          @Get(":id")
          one(@Param("id") id: string) { return {}; }
          @Post()
          create() { return {}; }
          @Delete(":id")
          remove() {}
          helper() {}
        }
      `,
      "src/health.controller.ts": `
        import { Controller, Get } from "@nestjs/common";
        @Controller()
        export class HealthController {
          @Get("health")
          check() { return "ok"; }
        }
      `,
    });
    const routes = findSourceRoutes(root);
    expect(signatures(routes)).toEqual([
      "DELETE /api/users/{id}",
      "GET /api/health",
      "GET /api/users",
      "GET /api/users/{id}",
      "POST /api/users",
    ]);
    expect(routes.every((route) => route.framework === "nestjs")).toBe(true);
  });

  it("reads a plain node:http handler and WebSocket servers from ws", () => {
    const root = writeTree({
      "server.mjs": `
        import http from "node:http";
        import { WebSocketServer } from "ws";
        const routes = { "GET /api/items": listItems, "/api/about": about };
        function route(req, res) {
          const url = new URL(req.url, "http://localhost");
          if (req.method === "POST" && url.pathname === "/api/items") return create(req, res);
          if (url.pathname.startsWith("/api/items/")) return one(req, res);
          if (/^\\/api\\/orders\\/(\\d+)$/.test(url.pathname)) return order(req, res);
          const handler = routes[req.method + " " + url.pathname];
          return handler ? handler(req, res) : notFound(res);
        }
        const server = http.createServer((req, res) => route(req, res));
        const wss = new WebSocketServer({ path: "/events" });
        server.on("upgrade", (request, socket, head) => {
          const { pathname } = new URL(request.url, "http://localhost");
          if (pathname === "/notifications") wss.handleUpgrade(request, socket, head, () => {});
        });
        http.get("/outgoing-request", (response) => {});
      `,
    });
    expect(signatures(findSourceRoutes(root))).toEqual([
      "ALL /api/about",
      "ALL /api/items/{param}",
      "ALL /api/orders/{param}",
      "GET /api/items",
      "POST /api/items",
    ]);
    expect(
      findWebSocketPaths(root)
        .map((channel) => channel.path)
        .sort(),
    ).toEqual(["/events", "/notifications"]);
  });
});
