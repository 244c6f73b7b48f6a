import { beforeAll, describe, expect, it } from "vitest";
import type { Route } from "../../src/map/system-map.ts";
import { scanSourceRoutes } from "../../src/probes/routes/find-source-routes.ts";
import { aiohttpHarbour } from "../fixtures/route-apps/aiohttp-harbour.ts";
import { djangoBlog } from "../fixtures/route-apps/django-blog.ts";
import { fastapiStore } from "../fixtures/route-apps/fastapi-store.ts";
import { flaskLibrary } from "../fixtures/route-apps/flask-library.ts";
import { pythonHandRolled } from "../fixtures/route-apps/python-hand-rolled.ts";
import { bodyProperties, bodyRequired, parametersOf, routeAt } from "../fixtures/route-apps/route-lookup.ts";
import { signatures, writeTree } from "./write-tree.ts";

describe("a Flask app with blueprints nested across files and REST layers", () => {
  let routes: Route[];
  beforeAll(() => {
    routes = scanSourceRoutes(writeTree(flaskLibrary)).routes;
  });

  it("resolves nested blueprint prefixes, MethodView, Flask-RESTful resources and a RESTX namespace", () => {
    expect(signatures(routes)).toEqual([
      "DELETE /books/{book_id}",
      "GET /api/loans",
      "GET /books/{book_id}",
      "GET /rest/authors",
      "GET /rest/authors/{author_id}",
      "GET /search",
      "GET /x/reviews/{review_id}",
      "POST /api/loans",
      "POST /api/loans/{loan_id}/return",
      "POST /rest/authors",
      "PUT /api/loans/members/{member_id}",
      "PUT /books/{book_id}",
      "PUT /x/reviews/{review_id}",
    ]);
  });

  it("reads request.args, .form, .cookies, JSON aliases and a before_request hook's header", () => {
    expect(parametersOf(routeAt(routes, "GET /search"))).toEqual({
      "query:q": { type: "string" },
      "query:page": { type: "integer" },
      "header:X-Tenant": { type: "string" },
    });
    const loans = routeAt(routes, "POST /api/loans");
    expect(loans.request_body?.content_type).toBe("application/json");
    expect(bodyProperties(loans)).toEqual({
      book_id: { type: "string" },
      due: { type: "string" },
      member: { type: "object", properties: { email: { type: "string" } } },
      renew: { type: "boolean" },
      copies: { type: "integer" },
    });
    expect(parametersOf(routeAt(routes, "GET /api/loans"))).toMatchObject({
      "query:status!": { type: "string" },
      "query:limit": { type: "integer" },
    });
    expect(routeAt(routes, "GET /api/loans").request_body).toBeUndefined();
    const giveBack = routeAt(routes, "POST /api/loans/{loan_id}/return");
    expect(giveBack.request_body).toEqual({
      content_type: "application/x-www-form-urlencoded",
      schema: {
        type: "object",
        properties: { note: { type: "string" }, rating: { type: "integer" } },
        required: ["note"],
      },
    });
    expect(parametersOf(giveBack)).toMatchObject({ "cookie:session_id": { type: "string" } });
    expect(routeAt(routes, "PUT /api/loans/members/{member_id}").request_body).toEqual({
      content_type: "application/json",
      schema: {
        type: "object",
        properties: {
          email: { type: "string", format: "email" },
          name: { type: "string", maxLength: 40 },
          plan: { type: "string", enum: ["basic", "pro"] },
        },
        required: ["email"],
      },
    });
  });

  it("gives each method of a class its own reads: MethodView, reqparse, a RESTX model", () => {
    expect(parametersOf(routeAt(routes, "GET /books/{book_id}"))).toMatchObject({
      "query:fields": { type: "array", items: { type: "string" } },
    });
    expect(bodyProperties(routeAt(routes, "PUT /books/{book_id}"))).toEqual({
      title: { type: "string" },
      year: { type: "string" },
    });
    // The app's before_request hook reads X-Tenant for the REST API it wraps too.
    expect(parametersOf(routeAt(routes, "GET /rest/authors"))).toEqual({
      "query:sort": { type: "string", enum: ["asc", "desc"] },
      "query:name!": { type: "string" },
      "header:X-Tenant": { type: "string" },
    });
    const author = routeAt(routes, "POST /rest/authors");
    expect(author.request_body).toEqual({
      content_type: "application/json",
      schema: {
        type: "object",
        properties: { age: { type: "integer" }, name: { type: "string" } },
        required: ["name"],
      },
    });
    expect(routeAt(routes, "PUT /x/reviews/{review_id}").request_body?.schema).toEqual({
      type: "object",
      properties: { stars: { type: "integer", minimum: 1, maximum: 5 }, text: { type: "string" } },
      required: ["stars"],
    });
  });
});

describe("a FastAPI app with routers nested across files", () => {
  let routes: Route[];
  beforeAll(() => {
    routes = scanSourceRoutes(writeTree(fastapiStore)).routes;
  });

  it("resolves APIRouter prefixes through two include_router levels", () => {
    expect(signatures(routes)).toEqual([
      "GET /api/v1/items",
      "GET /api/v1/items/{item_id}",
      "GET /health",
      "POST /api/v1/items",
      "POST /api/v1/orders/{order_id}/receipt",
      "PUT /api/v1/orders/{order_id}",
    ]);
  });

  it("reads typed query, header and cookie parameters, dependencies and Annotated markers", () => {
    expect(parametersOf(routeAt(routes, "GET /api/v1/items"))).toEqual({
      "query:skip": { type: "integer" },
      "query:limit": { type: "integer", maximum: 500 },
      "query:q": { type: "string", maxLength: 50 },
      "query:tags": { type: "array", items: { type: "string" } },
    });
    expect(parametersOf(routeAt(routes, "GET /api/v1/items/{item_id}"))).toEqual({
      "header:x-api-key!": { type: "string" },
    });
    expect(parametersOf(routeAt(routes, "GET /health"))).toEqual({ "query:verbose": { type: "boolean" } });
  });

  it("turns a pydantic model from another module (with its base) into the body's JSON Schema", () => {
    const create = routeAt(routes, "POST /api/v1/items");
    expect(create.request_body?.content_type).toBe("application/json");
    expect(create.request_body?.schema).toEqual({
      type: "object",
      properties: {
        name: { type: "string", minLength: 1, maxLength: 100 },
        price: { type: "number", exclusiveMinimum: 0 },
        category: { type: "string", enum: ["books", "games"] },
        condition: { type: "string", enum: ["new", "used"], default: "new" },
        description: { type: "string" },
        size: {
          type: "object",
          properties: { width: { type: "number" }, height: { type: "number" } },
          required: ["width", "height"],
        },
        stock: { type: "integer", minimum: 0 },
      },
      required: ["name", "price", "category"],
    });
  });

  it("embeds several Body() parameters and reads forms and uploads as multipart", () => {
    const update = routeAt(routes, "PUT /api/v1/orders/{order_id}");
    expect(update.request_body?.schema).toEqual({
      type: "object",
      properties: { quantity: { type: "integer", minimum: 1 }, note: { type: "string" } },
      required: ["quantity"],
    });
    expect(parametersOf(update)).toEqual({ "cookie:session": { type: "string" } });
    const receipt = routeAt(routes, "POST /api/v1/orders/{order_id}/receipt");
    expect(receipt.request_body?.content_type).toBe("multipart/form-data");
    expect(bodyRequired(receipt)).toEqual(["receipt"]);
  });
});

describe("a Django app with nested includes, forms, class-based views and a DRF router", () => {
  let routes: Route[];
  beforeAll(() => {
    routes = scanSourceRoutes(writeTree(djangoBlog)).routes;
  });

  it("expands viewsets into list, detail and @action routes under the included prefixes", () => {
    expect(signatures(routes)).toEqual([
      "ALL /blog/",
      "ALL /blog/archive/{year}/",
      "DELETE /blog/api/posts/{pk}/",
      "GET /blog/api/posts/",
      "GET /blog/api/posts/{pk}/",
      "GET /blog/contact/",
      "GET /blog/drafts/{pk}/",
      "PATCH /blog/api/posts/{pk}/",
      "POST /blog/api/posts/",
      "POST /blog/api/posts/{pk}/publish/",
      "POST /blog/contact/",
      "POST /blog/drafts/{pk}/",
      "PUT /blog/api/posts/{pk}/",
    ]);
  });

  it("reads a form's fields as the body, request.GET and META headers", () => {
    const contact = routeAt(routes, "POST /blog/contact/");
    expect(contact.request_body).toEqual({
      content_type: "application/x-www-form-urlencoded",
      schema: {
        type: "object",
        properties: {
          name: { type: "string", maxLength: 80 },
          email: { type: "string", format: "email" },
          age: { type: "integer", minimum: 13 },
          topic: { type: "string", enum: ["help", "sales"] },
        },
        required: ["name", "email", "topic"],
      },
    });
    expect(parametersOf(contact)).toEqual({ "header:User-Agent": { type: "string" } });
    expect(parametersOf(routeAt(routes, "ALL /blog/"))).toEqual({ "query:page": { type: "integer" } });
    expect(parametersOf(routeAt(routes, "GET /blog/drafts/{pk}/"))).toEqual({
      "query:preview": { type: "string" },
    });
    expect(bodyRequired(routeAt(routes, "POST /blog/drafts/{pk}/"))).toEqual(["title"]);
  });

  it("uses the serializer (and its model's fields) for writes, and get_queryset's reads for every action", () => {
    const create = routeAt(routes, "POST /blog/api/posts/");
    expect(bodyProperties(create)).toEqual({
      tags: { type: "array" },
      title: { type: "string", maxLength: 200 },
      body: { type: "string" },
      status: { type: "string", maxLength: 10, enum: ["draft", "live"] },
    });
    expect(bodyRequired(create)).toEqual(["title"]);
    expect(bodyRequired(routeAt(routes, "PATCH /blog/api/posts/{pk}/"))).toEqual([]);
    expect(parametersOf(routeAt(routes, "GET /blog/api/posts/"))).toEqual({
      "query:author": { type: "string" },
    });
    expect(bodyProperties(routeAt(routes, "POST /blog/api/posts/{pk}/publish/"))).toEqual({
      when: { type: "string" },
    });
  });
});

describe("hand-rolled Python dispatch", () => {
  it("reads http.server branches, a (method, pattern, handler) table and a WSGI callable", () => {
    const routes = scanSourceRoutes(writeTree(pythonHandRolled)).routes;
    expect(signatures(routes)).toEqual([
      "ALL /status",
      "GET /api/items/{item_id}",
      "GET /api/search",
      "POST /api/items",
      "POST /api/login",
    ]);
    expect(parametersOf(routeAt(routes, "GET /api/search"))).toEqual({
      "query:term": { type: "string" },
      "query:limit": { type: "integer" },
    });
    const login = routeAt(routes, "POST /api/login");
    expect(login.request_body?.content_type).toBe("application/x-www-form-urlencoded");
    expect(bodyProperties(login)).toEqual({ username: { type: "string" } });
    expect(parametersOf(login)).toEqual({ "header:X-Csrf-Token": { type: "string" } });
    expect(routeAt(routes, "POST /api/items").request_body).toEqual({
      content_type: "application/json",
      schema: { type: "object", properties: { name: { type: "string" }, price: { type: "string" } } },
    });
    expect(parametersOf(routeAt(routes, "GET /api/items/{item_id}"))).toEqual({
      "query:fields": { type: "string" },
    });
    expect(parametersOf(routeAt(routes, "ALL /status"))).toEqual({
      "query:verbose": { type: "string" },
      "header:X-Status-Token": { type: "string" },
    });
  });
});

describe("hand-written checks through a name and a merge", () => {
  it("types a field checked as a list or a dict or converted through a name, and reads the fields of a record merged with the body", () => {
    const root = writeTree({
      "app.py": String.raw`
from flask import Flask, jsonify, request
app = Flask(__name__)

@app.route("/carts", methods=["POST"])
def create_cart():
    body = request.get_json(silent=True) or {}
    b = body
    if not isinstance(b.get("lines"), list) or not isinstance(b.get("meta"), dict):
        return jsonify(error="bad"), 400
    return jsonify(b), 201

@app.route("/carts", methods=["GET"])
def list_carts():
    asked = request.args.get("per_page", "")
    size = int(asked) if asked.isdigit() else 20
    return jsonify(size=size, sort=request.args.get("sort", "id"))

@app.route("/carts/<id>", methods=["PUT"])
def update_cart(id):
    row = {"id": id, "lines": []}
    merged = {**row, **(request.get_json(silent=True) or {})}
    if not isinstance(merged.get("lines"), list) or not isinstance(merged.get("version"), int):
        return jsonify(error="bad"), 400
    return jsonify(merged)
`,
    });
    const routes = scanSourceRoutes(root).routes;
    expect(bodyProperties(routeAt(routes, "POST /carts"))).toEqual({
      lines: { type: "array" },
      meta: { type: "object" },
    });
    // A conversion of the name a query value was read into types that value.
    expect(parametersOf(routeAt(routes, "GET /carts"))).toEqual({
      "query:per_page": { type: "integer" },
      "query:sort": { type: "string" },
    });
    expect(bodyProperties(routeAt(routes, "PUT /carts/{id}"))).toEqual({
      lines: { type: "array" },
      version: { type: "integer" },
    });
  });
});

describe("an aiohttp app whose handlers hand the request to a service module", () => {
  let scan: ReturnType<typeof scanSourceRoutes>;
  beforeAll(() => {
    scan = scanSourceRoutes(writeTree(aiohttpHarbour));
  });

  it("links router entries to their handlers and reports the WebSocket handler as a channel", () => {
    expect(signatures(scan.routes)).toEqual([
      "GET /api/moorings",
      "GET /api/visits",
      "GET /health",
      "PATCH /api/moorings/{id}",
      "POST /api/moorings",
      "POST /api/visits",
    ]);
    expect(scan.channels.map((channel) => [channel.path, channel.framework])).toEqual([
      ["/ws/feed", "aiohttp"],
    ]);
    expect(bodyProperties(routeAt(scan.routes, "POST /api/visits"))).toEqual({ boat: { type: "string" } });
  });

  it("follows the body a helper returns into service functions, typing what they convert", () => {
    const create = routeAt(scan.routes, "POST /api/moorings");
    expect(create.request_body?.content_type).toBe("application/json");
    expect(bodyProperties(create)).toEqual({
      berth_id: { type: "integer" },
      arrives_on: { type: "string", format: "date" },
      length_m: { type: "number" },
      name: { type: "string" },
    });
    // Passed by keyword, and a date parsed after a strip().
    expect(bodyProperties(routeAt(scan.routes, "PATCH /api/moorings/{id}"))).toEqual({
      leaves_on: { type: "string", format: "date" },
    });
    expect(parametersOf(routeAt(scan.routes, "GET /api/moorings"))).toEqual({
      "query:limit": { type: "integer" },
      "query:page": { type: "integer" },
      "query:pier": { type: "string" },
    });
  });
});
