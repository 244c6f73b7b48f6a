import { describe, expect, it } from "vitest";
import { scanSourceRoutes, scanSourceRoutesAsync } from "../../src/probes/routes/find-source-routes.ts";
import { parametersOf, routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { signatures, writeTree } from "./write-tree.ts";

describe("mounts and registrations in their less common forms", () => {
  it("JavaScript: named ESM exports, namespace members, dynamic imports, prefix arrays, loops over names", () => {
    const root = writeTree({
      "package.json": JSON.stringify({ dependencies: { express: "4" } }),
      "app.mjs": `
        import express from "express";
        import { router as users } from "./routes/users.mjs";
        import * as admin from "./routes/admin.mjs";
        const app = express();
        const v1 = express.Router();
        v1.use("/users", users);
        app.use("/v1", v1);
        app.use("/admin", admin.panel);
        app.use(["/a", "/b"], (await import("./routes/multi.mjs")).default);
        for (const kind of ["cats", "dogs"]) app.get("/pets/" + kind + "/:id", (req, res) => res.end());
        ["users", "posts"].forEach((name) => {
          app.post(\`/crud/\${name}\`, (req, res) => res.json({ by: req.query.by }));
        });
      `,
      "routes/users.mjs": `
        import { Router } from "express";
        export const router = Router();
        const settings = Router({ mergeParams: true });
        settings.get("/", (req, res) => res.json({ theme: req.query.theme }));
        router.use("/:userId/settings", settings);
      `,
      "routes/admin.mjs": `
        import express from "express";
        const panel = express.Router();
        panel.delete("/cache", (req, res) => res.end());
        export { panel };
      `,
      "routes/multi.mjs": `
        import express from "express";
        const r = express.Router();
        r.get("/x", (req, res) => res.end());
        export default r;
      `,
    });
    const routes = scanSourceRoutes(root).routes;
    expect(signatures(routes)).toEqual([
      "DELETE /admin/cache",
      "GET /a/x",
      "GET /b/x",
      "GET /pets/cats/{id}",
      "GET /pets/dogs/{id}",
      "GET /v1/users/{userId}/settings",
      "POST /crud/posts",
      "POST /crud/users",
    ]);
    expect(parametersOf(routeAt(routes, "POST /crud/users"))).toEqual({ "query:by": { type: "string" } });
  });

  it("JavaScript: a literal table of routes registered in a loop, with handlers one import away", () => {
    const root = writeTree({
      "package.json": JSON.stringify({ dependencies: { express: "4" } }),
      "app.js": `
        const express = require("express");
        const router = express.Router();
        const users = require("./users");
        const routes = [
          { method: "get", path: "/users", handler: users.list },
          { method: "post", path: "/users", handler: users.create },
          { method: "delete", path: "/users/:id", handler: (req, res) => res.json({ force: req.query.force }) },
        ];
        routes.forEach((route) => router[route.method](route.path, route.handler));
        for (const { method, path } of [{ method: "put", path: "/ping" }]) router[method](path, (req, res) => res.end());
        const app = express();
        app.use(express.json());
        app.use("/api", router);
      `,
      "users.js": `
        exports.list = (req, res) => res.json({ page: Number(req.query.page) });
        exports.create = (req, res) => res.json({ email: req.body.email });
      `,
    });
    const routes = scanSourceRoutes(root).routes;
    expect(signatures(routes)).toEqual([
      "DELETE /api/users/{id}",
      "GET /api/users",
      "POST /api/users",
      "PUT /api/ping",
    ]);
    expect(parametersOf(routeAt(routes, "GET /api/users"))).toEqual({ "query:page": { type: "number" } });
    expect(routeAt(routes, "POST /api/users").request_body).toEqual({
      content_type: "application/json",
      schema: { type: "object", properties: { email: { type: "string" } } },
    });
    expect(parametersOf(routeAt(routes, "DELETE /api/users/{id}"))).toEqual({
      "query:force": { type: "string" },
    });
  });

  it("Fastify: a plugin registered inside a plugin loaded with require, whatever its parameter is called", () => {
    const root = writeTree({
      "server.js": `
        const fastify = require("fastify")();
        fastify.register(require("./plugins/things"), { prefix: "/things" });
      `,
      "plugins/things.js": `
        module.exports = async function (app, opts) {
          app.register(async function (inner) {
            inner.get("/deep", async (request) => ({ q: request.query.q }));
          }, { prefix: "/inner" });
          app.route({ method: "POST", url: "/", handler: async (request) => request.body.name });
        };
      `,
    });
    const routes = scanSourceRoutes(root).routes;
    expect(signatures(routes)).toEqual(["GET /things/inner/deep", "POST /things"]);
    // Fastify parses JSON bodies itself.
    expect(routeAt(routes, "POST /things").request_body?.content_type).toBe("application/json");
  });

  it("Python: blueprints registered without a prefix, Django include() of a module object and of a list", () => {
    const root = writeTree({
      "shop/__init__.py": `
from flask import Flask
from shop.admin import admin
app = Flask(__name__)
app.register_blueprint(admin)
`,
      "shop/admin.py": `
from flask import Blueprint
from shop.reports import reports
admin = Blueprint("admin", __name__, url_prefix="/admin")
admin.register_blueprint(reports)
`,
      "shop/reports.py": `
from flask import Blueprint, request
reports = Blueprint("reports", __name__, url_prefix="/reports")

@reports.route("/<name>", methods=["GET", "POST"])
def report(name):
    return {"format": request.values.get("format")}
`,
      "proj/urls.py": `
from django.urls import include, path
from accounts import urls as account_urls
extra = [path("ping/", lambda request: None)]
urlpatterns = [
    path("accounts/", include(account_urls)),
    path("extra/", include((extra, "extra"))),
]
`,
      "accounts/urls.py": `
from django.urls import path
from . import views
urlpatterns = [path("login/", views.login_view)]
`,
      "accounts/views.py": `
from django.views.decorators.http import require_POST

@require_POST
def login_view(request):
    return request.POST["username"]
`,
    });
    const routes = scanSourceRoutes(root).routes;
    expect(signatures(routes)).toEqual([
      "ALL /extra/ping/",
      "GET /admin/reports/{name}",
      "POST /accounts/login/",
      "POST /admin/reports/{name}",
    ]);
    // request.values is the query string for GET and the form for POST.
    expect(parametersOf(routeAt(routes, "GET /admin/reports/{name}"))).toEqual({
      "query:format": { type: "string" },
    });
    expect(routeAt(routes, "POST /admin/reports/{name}").request_body?.content_type).toBe(
      "application/x-www-form-urlencoded",
    );
  });

  it("reads Python in a child process while JavaScript is read, with the same result", async () => {
    const root = writeTree({
      "package.json": JSON.stringify({ dependencies: { express: "4" } }),
      "web/app.js": `
        const app = require("express")();
        app.get("/js", (req, res) => res.json({ q: req.query.q }));
      `,
      "api/main.py": `
from fastapi import FastAPI
app = FastAPI()

@app.get("/py")
def py(limit: int = 10):
    return {}
`,
    });
    const sync = scanSourceRoutes(root);
    const parallel = await scanSourceRoutesAsync(root);
    expect(parallel).toEqual(sync);
    expect(signatures(parallel.routes)).toEqual(["GET /js", "GET /py"]);
  });
});
