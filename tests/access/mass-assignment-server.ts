import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Operation } from "../../src/map/system-map.ts";
import { undocumented } from "../fixtures/probe-harness.ts";

// A small shop for the mass-assignment probe: orders whose price the server computes from a catalogue,
// tickets whose role and owner the server decides. `style` says what happens to a field the client must
// not set: `vulnerable` stores it, `ignore` drops it, `reject` answers 400. Its invoices, known only from
// their handler's reads (no document), take an amount the client must send: an input, in every style.

export type AssignmentStyle = "vulnerable" | "ignore" | "reject";

export interface ShopServer {
  baseUrl: string;
  document: Record<string, unknown>;
  /** The undocumented invoice routes, as a reader of the handlers' source finds them. */
  operations: Operation[];
  close(): Promise<void>;
}

const PEOPLE = [
  { id: 1, email: "ann@shop.test", role: "member" },
  { id: 2, email: "ben@shop.test", role: "member" },
];
const CATALOGUE = [
  { sku: "SKU-7", price: 450 },
  { sku: "SKU-8", price: 990 },
];
const json = { "application/json": { schema: { type: "object" } } };
const bearer = [{ bearer: [] }];

const DOCUMENT = {
  openapi: "3.0.3",
  info: { title: "shop", version: "1" },
  components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
  security: bearer,
  paths: {
    "/api/login": {
      post: {
        security: [],
        requestBody: {
          content: {
            "application/json": {
              schema: {
                type: "object",
                properties: { email: { type: "string" }, password: { type: "string" } },
              },
            },
          },
        },
        responses: { "200": { description: "token", content: json } },
      },
    },
    "/api/me": { get: { responses: { "200": { description: "me", content: json } } } },
    "/api/catalogue": {
      get: { security: [], responses: { "200": { description: "items", content: json } } },
    },
    "/api/orders": {
      post: {
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                properties: {
                  sku: { type: "string" },
                  quantity: { type: "integer", minimum: 1, maximum: 5 },
                },
                required: ["sku", "quantity"],
              },
            },
          },
        },
        responses: {
          "201": {
            description: "created",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: {
                    id: { type: "integer" },
                    sku: { type: "string" },
                    quantity: { type: "integer" },
                    price: { type: "integer" },
                  },
                },
              },
            },
          },
        },
      },
    },
    "/api/tickets": {
      post: {
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                properties: { title: { type: "string", maxLength: 80 } },
                required: ["title"],
              },
            },
          },
        },
        responses: { "201": { description: "created", content: json } },
      },
    },
    "/api/tickets/{id}": {
      parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
      get: { responses: { "200": { description: "ticket", content: json }, "404": { description: "none" } } },
      patch: {
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: { type: "object", properties: { title: { type: "string", maxLength: 80 } } },
            },
          },
        },
        responses: { "200": { description: "ticket", content: json } },
      },
    },
  },
};

export async function startShopServer(style: AssignmentStyle): Promise<ShopServer> {
  let next = 1;
  const orders = new Map<number, Record<string, unknown>>();
  const tickets = new Map<number, Record<string, unknown>>();
  const invoices = new Map<number, Record<string, unknown>>([
    [900, { id: 900, customer: "Acme", amount: 1200, owner_id: 1 }],
  ]);
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: Record<string, unknown> = {};
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      body = {};
    }
    const reply = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    const url = new URL(request.url ?? "/", "http://localhost");
    const route = `${request.method} ${url.pathname}`;
    if (route === "POST /api/login") {
      const person = PEOPLE.find((candidate) => candidate.email === body.email && body.password === "pw");
      return person ? reply(200, { token: `t${person.id}` }) : reply(401, { error: "bad credentials" });
    }
    if (route === "GET /api/catalogue") return reply(200, { items: CATALOGUE });
    const caller = PEOPLE.find((person) => request.headers.authorization === `Bearer t${person.id}`);
    if (!caller) return reply(401, { error: "sign in" });
    if (route === "GET /api/me") return reply(200, caller);
    const refused = (fields: string[]) => style === "reject" && fields.some((field) => field in body);
    if (route === "POST /api/orders") {
      const product = CATALOGUE.find((item) => item.sku === body.sku);
      if (!product) return reply(400, { error: "unknown sku" });
      if (refused(["price"])) return reply(400, { error: "price is not writable" });
      const id = next++;
      const order = {
        id,
        sku: product.sku,
        quantity: body.quantity,
        price: style === "vulnerable" && typeof body.price === "number" ? body.price : product.price,
      };
      orders.set(id, order);
      return reply(201, order);
    }
    if (route === "POST /api/tickets") {
      if (typeof body.title !== "string") return reply(400, { error: "title" });
      if (refused(["role", "owner_id"])) return reply(400, { error: "unknown field" });
      const id = next++;
      const ticket = {
        id,
        title: body.title,
        role: style === "vulnerable" && typeof body.role === "string" ? body.role : "viewer",
        owner_id: caller.id,
      };
      tickets.set(id, ticket);
      return reply(201, ticket);
    }
    if (route === "POST /api/invoices") {
      const amount = Number(body.amount);
      if (!Number.isInteger(amount) || amount < 1)
        return reply(400, { error: "amount must be a whole number" });
      const id = next++;
      invoices.set(id, { id, customer: String(body.customer ?? ""), amount, owner_id: caller.id });
      return reply(201, { id });
    }
    if (route === "GET /api/invoices")
      return reply(
        200,
        [...invoices.values()].filter((entry) => entry.owner_id === caller.id),
      );
    const invoice = url.pathname.match(/^\/api\/invoices\/(\d+)$/);
    if (invoice && request.method === "GET") {
      const found = invoices.get(Number(invoice[1]));
      return found && found.owner_id === caller.id
        ? reply(200, found)
        : reply(404, { error: "no such invoice" });
    }
    const match = url.pathname.match(/^\/api\/tickets\/(\d+)$/);
    const ticket = match ? tickets.get(Number(match[1])) : undefined;
    if (match && (!ticket || ticket.owner_id !== caller.id)) return reply(404, { error: "no such ticket" });
    if (ticket && request.method === "GET") return reply(200, ticket);
    if (ticket && request.method === "PATCH") {
      if (refused(["owner_id", "role"])) return reply(400, { error: "unknown field" });
      if (typeof body.title === "string") ticket.title = body.title;
      if (style === "vulnerable" && body.owner_id !== undefined) ticket.owner_id = Number(body.owner_id);
      return reply(200, ticket);
    }
    return reply(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    document: DOCUMENT,
    operations: [
      sourceOperation("POST", "/api/invoices", {
        type: "object",
        properties: { customer: { type: "string" }, amount: { type: "string" } },
      }),
      sourceOperation("GET", "/api/invoices"),
      sourceOperation("GET", "/api/invoices/{id}"),
    ],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function sourceOperation(method: string, path: string, body?: Record<string, unknown>): Operation {
  return {
    ...undocumented(method, path),
    security: "required",
    parameters: path.includes("{id}")
      ? [{ name: "id", in: "path", required: true, schema: { type: "integer" } }]
      : [],
    ...(body ? { request_body: { content_type: "application/json", required: true, schema: body } } : {}),
  };
}
