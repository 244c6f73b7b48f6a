import { describe, expect, it } from "vitest";
import {
  composeInventory,
  inventoryByProvenance,
  looksLikeId,
  type OperationCandidate,
  templateOfConcrete,
} from "../../src/map/inventory.ts";
import type { Operation } from "../../src/map/system-map.ts";

const documented: Operation = {
  method: "GET",
  path: "/api/items/{itemId}",
  security: "required",
  parameters: [{ name: "itemId", in: "path", required: true, schema: { type: "integer" } }],
  responses: {},
  seen_in: ["openapi"],
  documented: true,
};

describe("composeInventory", () => {
  it("merges a source route and observed traffic into the documented operation, keeping provenance", () => {
    const candidates: OperationCandidate[] = [
      {
        method: "GET",
        path: "/api/items/{id}",
        provenance: "source",
        parameters: [{ name: "expand", in: "query", required: false }],
        handler: { file: "src/items.ts", line: 12, framework: "express" },
      },
      { method: "GET", path: "/api/items/42?expand=owner", provenance: "traffic", concrete: true },
    ];
    const [operation, ...rest] = composeInventory([documented], candidates);
    expect(rest).toEqual([]);
    expect(operation?.path).toBe("/api/items/{itemId}");
    expect(operation?.seen_in).toEqual(["openapi", "source", "traffic"]);
    expect(operation?.documented).toBe(true);
    expect(operation?.handler).toEqual({ file: "src/items.ts", line: 12, framework: "express" });
    expect(operation?.parameters.map((parameter) => `${parameter.in}:${parameter.name}`)).toEqual([
      "path:itemId",
      "query:expand",
    ]);
  });

  it("templates ids in concrete paths nobody declared, and unions the roles that reached them", () => {
    const operations = composeInventory(
      [],
      [
        { method: "GET", path: "/orders/17/lines", provenance: "link", concrete: true, roles: ["member"] },
        { method: "GET", path: "/orders/18/lines", provenance: "traffic", concrete: true, roles: ["admin"] },
      ],
    );
    expect(operations).toHaveLength(1);
    expect(operations[0]).toMatchObject({
      path: "/orders/{id}/lines",
      seen_in: ["link", "traffic"],
      roles: ["member", "admin"],
      parameters: [{ name: "id", in: "path", required: true }],
      documented: false,
    });
  });

  it("replaces an any-method route with the methods forms and calls use, and prefers the form's encoding", () => {
    const operations = composeInventory(
      [],
      [
        {
          method: "ALL",
          path: "/cart/buy",
          provenance: "source",
          request_body: {
            content_type: "application/json",
            required: true,
            schema: { type: "object", properties: { qty: { type: "integer" } } },
          },
        },
        {
          method: "POST",
          path: "/cart/buy",
          provenance: "form",
          concrete: true,
          form: { page: "/cart", enctype: "application/x-www-form-urlencoded", csrf_field: "_csrf" },
          request_body: {
            content_type: "application/x-www-form-urlencoded",
            required: true,
            schema: { type: "object", properties: { qty: { type: "string" }, _csrf: { type: "string" } } },
          },
        },
      ],
    );
    expect(operations.map((operation) => `${operation.method} ${operation.path}`)).toEqual([
      "POST /cart/buy",
    ]);
    const [post] = operations;
    expect(post?.seen_in.sort()).toEqual(["form", "source"]);
    expect(post?.request_body?.content_type).toBe("application/x-www-form-urlencoded");
    expect(Object.keys((post?.request_body?.schema?.properties ?? {}) as object).sort()).toEqual([
      "_csrf",
      "qty",
    ]);
    expect(post?.form?.csrf_field).toBe("_csrf");
  });

  it("sends an any-method route nothing else names as a browser reaches it: GET, or POST when it reads a body", () => {
    const operations = composeInventory(
      [],
      [
        { method: "ALL", path: "/go", provenance: "source" },
        {
          method: "*",
          path: "/hooks/ingest",
          provenance: "source",
          request_body: { content_type: "application/json", required: true, schema: { type: "object" } },
        },
      ],
    );
    expect(operations.map((operation) => `${operation.method} ${operation.path}`)).toEqual([
      "GET /go",
      "POST /hooks/ingest",
    ]);
  });

  it("takes a form's number and bounds over a handler's bare read of the field, never over a document's", () => {
    const form = (path: string): OperationCandidate => ({
      method: "POST",
      path,
      provenance: "form",
      request_body: {
        content_type: "application/x-www-form-urlencoded",
        required: true,
        schema: {
          type: "object",
          properties: { amount: { type: "number", minimum: 1 }, memo: { type: "string" } },
        },
      },
    });
    const bare = { type: "object", properties: { amount: { type: "string" }, customer: { type: "string" } } };
    const [read] = composeInventory(
      [],
      [
        {
          method: "POST",
          path: "/invoices",
          provenance: "source",
          request_body: { content_type: "application/x-www-form-urlencoded", required: true, schema: bare },
        },
        form("/invoices"),
      ],
    );
    expect(read?.request_body?.schema).toMatchObject({
      properties: {
        amount: { type: "number", minimum: 1 },
        customer: { type: "string" },
        memo: { type: "string" },
      },
    });
    const contract: Operation = {
      method: "POST",
      path: "/invoices",
      security: "required",
      parameters: [],
      request_body: { content_type: "application/json", required: true, schema: bare },
      responses: {},
      seen_in: ["openapi"],
      documented: true,
    };
    const [kept] = composeInventory([contract], [form("/invoices")]);
    expect(kept?.request_body?.schema).toMatchObject({ properties: { amount: { type: "string" } } });
    expect(kept?.request_body?.schema).not.toMatchObject({ properties: { amount: { minimum: 1 } } });
  });

  it("keeps one operation per GraphQL field on a shared endpoint", () => {
    const field = (name: string): OperationCandidate => ({
      method: "POST",
      path: "/graphql",
      provenance: "graphql",
      graphql: { kind: "query", field: name, arguments: [], selection: "" },
    });
    const operations = composeInventory([], [field("pastes"), field("users"), field("pastes")]);
    expect(operations.map((operation) => operation.operation_id)).toEqual(["query.pastes", "query.users"]);
    expect(inventoryByProvenance(operations)).toEqual({ graphql: 2 });
  });
});

describe("templateOfConcrete", () => {
  it("prefers the most specific known template, else turns id-like segments into parameters", () => {
    const known = [{ path: "/items/{id}" }, { path: "/items/new" }];
    expect(templateOfConcrete("/items/new", known)).toBe("/items/new");
    expect(templateOfConcrete("/items/9?x=1", known)).toBe("/items/{id}");
    expect(templateOfConcrete("/users/5f1d7c2e9b1e8a0012345678/keys/3", [])).toBe("/users/{id}/keys/{id2}");
    expect(templateOfConcrete("/docs/getting-started", [])).toBe("/docs/getting-started");
  });

  it("folds a word into a declared template but not into one guessed from ids", () => {
    expect(templateOfConcrete("/products/search", [{ path: "/products/{id}", seen_in: ["source"] }])).toBe(
      "/products/{id}",
    );
    const guessed = [{ path: "/products/{id}", seen_in: ["link" as const, "traffic" as const] }];
    expect(templateOfConcrete("/products/search", guessed)).toBe("/products/search");
    expect(templateOfConcrete("/products/77", guessed)).toBe("/products/{id}");
  });

  it("keeps a page named like an action apart from the items links showed by id", () => {
    const operations = composeInventory(
      [],
      [
        { method: "GET", path: "/products/12", provenance: "link", concrete: true },
        { method: "GET", path: "/products/search", provenance: "link", concrete: true },
        { method: "GET", path: "/products/31", provenance: "traffic", concrete: true },
      ],
    );
    expect(operations.map((operation) => `${operation.method} ${operation.path}`)).toEqual([
      "GET /products/{id}",
      "GET /products/search",
    ]);
  });

  it("tells ids from words", () => {
    expect(looksLikeId("123")).toBe(true);
    expect(looksLikeId("0d4f7a3e-1b2c-4d5e-8f90-1234567890ab")).toBe(true);
    expect(looksLikeId("settings")).toBe(false);
    expect(looksLikeId("getting-started-with-the-product")).toBe(false);
  });
});
