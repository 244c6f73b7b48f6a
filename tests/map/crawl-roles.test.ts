import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { composeInventory } from "../../src/map/inventory.ts";
import { ANONYMOUS, type CrawlResult, crawlAsRoles, mergePages } from "../../src/probes/pages/crawl-pages.ts";
import { candidatesFromPages } from "../../src/probes/pages/page-candidates.ts";
import { parsePage } from "../../src/probes/pages/parse-page.ts";
import { type ShopServer, startShopServer } from "./crawl-shop-server.ts";

let shop: ShopServer;
let crawl: CrawlResult;

beforeAll(async () => {
  shop = await startShopServer();
  const member = await shop.signIn("alice", "alice-pw");
  const admin = await shop.signIn("adam", "adam-pw");
  crawl = await crawlAsRoles(shop.baseUrl, "/", [
    ANONYMOUS,
    { role: "member", headers: async () => ({ cookie: member }) },
    { role: "admin", headers: async () => ({ cookie: admin }) },
  ]);
});

afterAll(() => shop.close());

const pageAt = (path: string) => crawl.pages.find((page) => page.path === path);

describe("crawlAsRoles", () => {
  it("reaches as each role what that role is served, keeping a rotating session alive", () => {
    expect(crawl.roles.map((role) => [role.role, role.error])).toEqual([
      ["anonymous", undefined],
      ["member", undefined],
      ["admin", undefined],
    ]);
    expect(pageAt("/")?.roles).toEqual(["anonymous", "member", "admin"]);
    // Anonymous is redirected; members and admins are served the account pages, every one of them, although
    // the session cookie they started with died after their first page.
    expect(pageAt("/account")).toMatchObject({ status: 200, title: "Account", roles: ["member", "admin"] });
    expect(pageAt("/account/orders?status=open")).toMatchObject({ status: 200, roles: ["member", "admin"] });
    const memberVisits = crawl.visits.filter((visit) => visit.roles?.includes("member"));
    expect(
      memberVisits.filter((visit) => visit.path.startsWith("/account")).map((visit) => visit.status),
    ).toEqual([200, 200]);
    expect(pageAt("/admin/users")).toMatchObject({ status: 200, roles: ["admin"] });
    expect(
      crawl.visits.some((visit) => visit.path === "/admin/users" && !visit.roles?.includes("admin")),
    ).toBe(false);
  });

  it("never signs out, deletes, submits a form or leaves GET", () => {
    expect(shop.loggedOut).toBe(0);
    expect(shop.requests.filter((request) => /logout|delete/.test(request))).toEqual([]);
    expect(shop.requests.filter((request) => !request.startsWith("GET "))).toEqual([
      "POST /login",
      "POST /login",
    ]);
    expect(shop.requests.some((request) => request.startsWith("GET /products/search"))).toBe(false);
  });

  it("reads every control of a form with its type, constraints and pre-filled values", () => {
    const product = pageAt("/products/1");
    expect(product?.forms.map((form) => `${form.method} ${form.action}`)).toEqual([
      "POST /cart",
      "POST /wishlist",
    ]);
    expect(product?.forms[0]?.inputs).toEqual([
      { name: "authenticity_token", type: "hidden", required: false },
      { name: "product_id", type: "hidden", required: false, value: "1" },
      { name: "quantity", type: "number", required: true, value: "1", min: "1", max: "10" },
      { name: "size", type: "select", required: true, options: ["S", "M", "L"], value: "S" },
      { name: "gift", type: "checkbox", required: false, options: ["yes"] },
      {
        name: "delivery",
        type: "radio",
        required: false,
        options: ["standard", "express"],
        value: "standard",
      },
    ]);
    expect(pageAt("/products")?.forms[0]?.inputs).toEqual([
      { name: "q", type: "search", required: false, maxlength: 40 },
      { name: "category", type: "select", required: false, options: ["", "books", "Music"], value: "books" },
      { name: "min_price", type: "number", required: false, min: "0" },
    ]);
    const account = pageAt("/account")?.forms[0];
    expect(account).toMatchObject({
      method: "POST",
      action: "/account/profile",
      enctype: "multipart/form-data",
    });
    expect(account?.inputs?.find((input) => input.name === "bio")).toEqual({
      name: "bio",
      type: "textarea",
      required: false,
      maxlength: 500,
      value: "Hello\nthere",
    });
    // Passwords and tokens are never kept; the login page's meta tag names its token field.
    const login = crawl.visits.find((visit) => visit.path === "/login");
    expect(login?.forms[0]?.inputs?.map((input) => [input.name, input.value])).toEqual([
      ["_csrf", undefined],
      ["username", undefined],
      ["password", undefined],
    ]);
    expect(login?.csrf).toEqual({ meta: "csrf-token", param: "_csrf" });
  });
});

describe("candidatesFromPages", () => {
  it("turns forms into typed operations offered to the roles that saw them", () => {
    const candidates = candidatesFromPages(crawl.visits);
    const cart = candidates.find((candidate) => candidate.method === "POST" && candidate.path === "/cart");
    expect(cart).toMatchObject({
      provenance: "form",
      concrete: true,
      roles: ["anonymous", "member", "admin"],
      form: {
        page: "/products/1",
        enctype: "application/x-www-form-urlencoded",
        csrf_field: "authenticity_token",
      },
    });
    expect(cart?.request_body).toEqual({
      content_type: "application/x-www-form-urlencoded",
      required: true,
      schema: {
        type: "object",
        properties: {
          authenticity_token: { type: "string" },
          product_id: { type: "string", default: "1" },
          quantity: { type: "number", minimum: 1, maximum: 10, default: 1 },
          size: { type: "string", enum: ["S", "M", "L"], default: "S" },
          gift: { type: "string", enum: ["yes"] },
          delivery: { type: "string", enum: ["standard", "express"], default: "standard" },
        },
        required: ["quantity", "size"],
      },
    });
    expect(candidates.find((candidate) => candidate.path === "/wishlist")?.form?.csrf_field).toBe(
      "authenticity_token",
    );

    const profile = candidates.find((candidate) => candidate.path === "/account/profile");
    expect(profile).toMatchObject({
      method: "POST",
      roles: ["member", "admin"],
      form: { enctype: "multipart/form-data", csrf_field: "csrfmiddlewaretoken" },
    });
    expect(profile?.request_body?.schema).toMatchObject({
      properties: {
        email: { type: "string", format: "email" },
        avatar: { type: "string", format: "binary" },
        phone: { type: "string", pattern: "^(?:[0-9 +-]+)$" },
      },
      required: ["email"],
    });
    const role = candidates.find((candidate) => candidate.path === "/admin/users/7/role");
    expect(role).toMatchObject({ roles: ["admin"], form: { csrf_field: "_token" } });
    expect(role?.request_body?.schema).toMatchObject({
      properties: { role: { type: "string", enum: ["member", "admin"] } },
    });

    // A GET form is a query, not a body.
    const search = candidates.find((candidate) => candidate.path === "/products/search");
    expect(search?.request_body).toBeUndefined();
    expect(search?.parameters).toEqual([
      { name: "q", in: "query", required: false, schema: { type: "string", maxLength: 40 } },
      {
        name: "category",
        in: "query",
        required: false,
        schema: { type: "string", enum: ["", "books", "Music"], default: "books" },
      },
      { name: "min_price", in: "query", required: false, schema: { type: "number", minimum: 0 } },
    ]);
  });

  it("turns links into GET operations with their query parameters, never sign-out or delete links", () => {
    const candidates = candidatesFromPages(crawl.visits);
    const links = candidates.filter((candidate) => candidate.provenance === "link");
    expect(links.find((candidate) => candidate.path === "/products")?.parameters).toEqual([
      { name: "page", in: "query", required: false, schema: { type: "string" }, example: "2" },
      { name: "sort", in: "query", required: false, schema: { type: "string" }, example: "price" },
    ]);
    expect(links.find((candidate) => candidate.path === "/account/orders")).toMatchObject({
      roles: ["member", "admin"],
      parameters: [{ name: "status", in: "query", example: "open" }],
    });
    expect(links.find((candidate) => candidate.path === "/admin/users")?.roles).toEqual(["admin"]);
    expect(links.map((candidate) => candidate.path)).not.toContain("/logout");
    expect(links.map((candidate) => candidate.path)).not.toContain("/admin/users/7/delete");

    // The inventory folds the product pages into one template and keeps who is offered what.
    const inventory = composeInventory([], candidates);
    const products = inventory.filter((operation) => operation.path.startsWith("/products/"));
    expect(products.map((operation) => `${operation.method} ${operation.path}`)).toContain(
      "GET /products/{id}",
    );
    expect(products.some((operation) => /\/products\/[12]$/.test(operation.path))).toBe(false);
    expect(
      inventory.find(
        (operation) => operation.method === "POST" && operation.path === "/admin/users/{id}/role",
      ),
    ).toMatchObject({
      seen_in: ["form"],
      roles: ["admin"],
      form: { page: "/admin/users", csrf_field: "_token" },
    });
  });
});

describe("forms a script submits", () => {
  it("keeps a form with no method and no action on its page, but sends nothing for it", () => {
    const origin = "http://127.0.0.1:9";
    const parsed = parsePage(
      `<form id="edit"><input name="title"><button>Save</button></form>
       <form action="/search"><input name="q"></form>
       <form method="post"><input name="note"></form>`,
      new URL("/tasks/4/edit", origin),
      origin,
    );
    expect(parsed.forms.map((form) => [form.method, form.action, form.scripted ?? false])).toEqual([
      ["GET", "/tasks/4/edit", true],
      ["GET", "/search", false],
      ["POST", "/tasks/4/edit", false],
    ]);
    const candidates = candidatesFromPages([
      { path: "/tasks/4/edit", status: 200, links: [], forms: parsed.forms, roles: ["member"] },
    ]);
    expect(
      candidates
        .filter((candidate) => candidate.provenance === "form")
        .map((candidate) => `${candidate.method} ${candidate.path}`),
    ).toEqual(["GET /search", "POST /tasks/4/edit"]);
  });
});

describe("forms as a browser submits them", () => {
  it("sends an action of # to the page itself, with the default button's name and value", () => {
    const origin = "http://127.0.0.1:9";
    const parsed = parsePage(
      `<form action="#" method="GET"><input name="id"><input type="submit" name="Submit" value="Submit">
         <input type="submit" name="Other" value="Other"></form>
       <form action="/find#results" method="post"><input name="q"><input type="image" name="go" src="g.png"></form>
       <form action="/notes" method="post"><input name="note"><button disabled name="skip">Skip</button>
         <button>Save</button><button name="later">Later</button></form>`,
      new URL("/modules/lookup/", origin),
      origin,
    );
    expect(parsed.forms.map((form) => [form.method, form.action, form.fields])).toEqual([
      ["GET", "/modules/lookup/", ["id", "Submit"]],
      ["POST", "/find", ["q"]],
      ["POST", "/notes", ["note"]],
    ]);
    expect(parsed.forms[0]!.inputs).toContainEqual({
      name: "Submit",
      type: "submit",
      required: false,
      value: "Submit",
    });
    const candidates = candidatesFromPages([
      { path: "/modules/lookup/", status: 200, links: [], forms: parsed.forms, roles: ["member"] },
    ]);
    expect(candidates.filter((candidate) => candidate.provenance === "form").map((c) => c.path)).toContain(
      "/modules/lookup/",
    );
  });
});

describe("crawl limits", () => {
  it("stops each role at its page cap and reports a role whose sign-in fails", async () => {
    const result = await crawlAsRoles(
      shop.baseUrl,
      "/",
      [
        ANONYMOUS,
        {
          role: "member",
          headers: async () => {
            throw new Error('sign-in as user "alice" failed at step "request"');
          },
        },
      ],
      { maxPagesPerRole: 2 },
    );
    expect(result.roles).toEqual([
      { role: "anonymous", pages: 2, stopped: "max_pages" },
      {
        role: "member",
        pages: 0,
        stopped: "sign_in",
        error: 'sign-in as user "alice" failed at step "request"',
      },
    ]);
  });

  it("refuses a role listed twice", async () => {
    await expect(crawlAsRoles(shop.baseUrl, "/", [ANONYMOUS, ANONYMOUS])).rejects.toThrow(/listed twice/);
  });
});

describe("what the crawl keeps of a page's kind", () => {
  it("marks a page answered with JSON as not HTML, and keeps it after merging the roles' visits", async () => {
    const server = http.createServer((request, response) => {
      if (request.url === "/api/items")
        return void response.writeHead(200, { "content-type": "application/json" }).end("[]");
      if (request.url === "/moved") return void response.writeHead(302, { location: "/" }).end();
      response
        .writeHead(200, { "content-type": "text/html" })
        .end('<title>Home</title><a href="/api/items">items</a> <a href="/moved">moved</a>');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const result = await crawlAsRoles(baseUrl, "/", [ANONYMOUS]);
      const kind = (path: string) => result.pages.find((page) => page.path === path)?.html;
      expect([kind("/"), kind("/api/items"), kind("/moved")]).toEqual([true, false, undefined]);
      expect(
        mergePages([
          { path: "/a", links: [], forms: [], html: false },
          { path: "/a", links: [], forms: [], html: true },
        ])[0]?.html,
      ).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
