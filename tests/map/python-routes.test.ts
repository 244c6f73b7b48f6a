import { describe, expect, it } from "vitest";
import { findSourceRoutes, findWebSocketPaths } from "../../src/probes/routes/find-source-routes.ts";
import { signatures, writeTree } from "./write-tree.ts";

describe("Python source routes", () => {
  it("reads Flask routes, blueprints with url_prefix, and a prefix given at registration", () => {
    const root = writeTree({
      "shop/__init__.py": `
from flask import Flask
from .views import catalog
from . import accounts

app = Flask(__name__)
app.register_blueprint(catalog)
app.register_blueprint(accounts.bp, url_prefix="/v2/accounts")

@app.route("/health")
def health():
    return "ok"

app.add_url_rule("/reports/<int:year>", view_func=health, methods=["GET", "POST"])
app.add_url_rule("/things/<thing_id>", view_func=ThingView.as_view("thing"))

# @app.route("/commented-out")
def not_a_route():
    """@app.route("/in-a-docstring")"""
    return "@app.get('/in-a-string')"
`,
      "shop/views.py": `
from flask import Blueprint
catalog = Blueprint("catalog", __name__, url_prefix="/catalog")

@catalog.route("/products/<int:product_id>", methods=["GET", "PUT"])
def product(product_id):
    return {}

@catalog.post("/products")
def create():
    return {}
`,
      "shop/accounts.py": `
from flask import Blueprint
bp = Blueprint("accounts", __name__, url_prefix="/accounts")

@bp.route("/<name>/avatar")
def avatar(name):
    return {}
`,
    });
    const routes = findSourceRoutes(root);
    expect(signatures(routes)).toEqual([
      "ALL /things/{thing_id}",
      "GET /catalog/products/{product_id}",
      "GET /health",
      "GET /reports/{year}",
      "GET /v2/accounts/{name}/avatar",
      "POST /catalog/products",
      "POST /reports/{year}",
      "PUT /catalog/products/{product_id}",
    ]);
    expect(routes.find((route) => route.path === "/health")).toMatchObject({
      file: "shop/__init__.py",
      line: 10,
      framework: "flask",
    });
  });

  it("reads FastAPI routes, APIRouter prefixes, include_router prefixes and websockets", () => {
    const root = writeTree({
      "app/main.py": `
from fastapi import FastAPI
from app.routers import items

app = FastAPI()
app.include_router(items.router, prefix="/api")

@app.get("/")
async def root():
    return {}

@app.api_route("/echo", methods=["POST", "PUT"])
async def echo():
    return {}

@app.websocket("/ws/{room}")
async def chat(websocket):
    pass
`,
      "app/routers/items.py": `
from fastapi import APIRouter
router = APIRouter(prefix="/items", tags=["items"])

@router.get("/{item_id}")
async def read(item_id: int):
    return {}

@router.delete("/{item_id:int}")
async def remove(item_id: int):
    return {}
`,
    });
    expect(signatures(findSourceRoutes(root))).toEqual([
      "DELETE /api/items/{item_id}",
      "GET /",
      "GET /api/items/{item_id}",
      "POST /echo",
      "PUT /echo",
    ]);
    expect(findWebSocketPaths(root).map((channel) => channel.path)).toEqual(["/ws/{room}"]);
  });

  it("reads Django urlpatterns with include() and re_path", () => {
    const root = writeTree({
      "site/urls.py": `
from django.urls import include, path, re_path
from . import views

urlpatterns = [
    path("", views.index),
    path("api/", include("library.urls")),
    re_path(r"^legacy/(?P<slug>[-\\w]+)/$", views.legacy),
    # path("old/", views.old),
]
`,
      "library/urls.py": `
from django.urls import path
from . import views

urlpatterns = [
    path("books/", views.books),
    path("books/<int:pk>/", views.book),
]
`,
    });
    const routes = findSourceRoutes(root);
    expect(signatures(routes)).toEqual([
      "ALL /",
      "ALL /api/books/",
      "ALL /api/books/{pk}/",
      "ALL /legacy/{slug}/",
    ]);
    expect(routes.every((route) => route.framework === "django")).toBe(true);
  });

  it("reads an http.server handler's dispatch on self.path", () => {
    const root = writeTree({
      "server.py": `
import json
import re
from http.server import BaseHTTPRequestHandler, HTTPServer

ORDER = re.compile(r"^/orders/(\\d+)$")

class Handler(BaseHTTPRequestHandler):
    routes = {"/api/version": "version"}

    def do_GET(self):
        if self.path == "/api/health":
            return self.reply(200)
        if self.path.startswith("/api/users/"):
            return self.user()
        match = ORDER.match(self.path)
        if match:
            return self.reply(200)
        self.reply(404, "GET /not-compared-here")

    def do_POST(self):
        path = self.path.split("?")[0]
        if path in ("/api/login", "/api/logout"):
            return self.reply(200)
        self.dispatch()

    def dispatch(self):
        if self.command == "DELETE" and self.path == "/api/session":
            return self.reply(204)
        if self.path == "/api/upload":
            return self.reply(201)

    def reply(self, status, body=""):
        self.send_response(status)
        # if self.path == "/commented":
        self.end_headers()

HTTPServer(("127.0.0.1", 8000), Handler).serve_forever()
`,
    });
    const routes = findSourceRoutes(root);
    expect(signatures(routes)).toEqual([
      "ALL /api/version",
      "DELETE /api/session",
      "GET /api/health",
      "GET /api/users/{param}",
      "GET /orders/{param}",
      "POST /api/login",
      "POST /api/logout",
      "POST /api/upload",
    ]);
    expect(routes.every((route) => route.framework === "http.server")).toBe(true);
  });
});
