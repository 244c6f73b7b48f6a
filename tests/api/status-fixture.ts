import http from "node:http";
import type { AddressInfo } from "node:net";

// A small JSON API with the same resource twice: under /api/loose every status and method flaw the status and
// semantics oracles look for, under /api/strict the correct twin. Bearer tokens from POST /api/login.
// `/api/loose/profile` sends an anonymous caller to the HTML sign-in page at /login, as page-minded session
// middleware does; its twin answers 401. Two look-alikes redirect an anonymous caller but are no JSON API
// sending people to sign in: `/api/strict/moved` points at another JSON read, `/api/strict/page` is HTML.

export interface StatusServer {
  baseUrl: string;
  document: Record<string, unknown>;
  close(): Promise<void>;
}

interface Row {
  id: number;
  owner: string;
  title: string;
  quantity: number;
  status: string;
}

const USERS: Record<string, string> = { ada: "ada-pw", ben: "ben-pw" };

export async function startStatusServer(): Promise<StatusServer> {
  const rows: Row[] = [];
  const deleted = new Set<number>();
  let next = 1;
  const tokens = new Map<string, string>();
  const server = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on("end", () => {
      const send = (status: number, body?: unknown) => {
        response.writeHead(status, { "content-type": "application/json" });
        response.end(body === undefined ? "" : JSON.stringify(body));
      };
      const url = new URL(request.url ?? "/", "http://fixture");
      const html = (status: number, markup: string, location?: string) => {
        response.writeHead(status, { "content-type": "text/html", ...(location ? { location } : {}) });
        response.end(markup);
      };
      const method = request.method ?? "GET";
      let body: Record<string, unknown> = {};
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        return send(400, { error: "malformed JSON" });
      }
      if (method === "POST" && url.pathname === "/api/login") {
        const name = String(body.username);
        if (USERS[name] !== body.password) return send(401, { error: "bad credentials" });
        const token = `t-${name}-${Math.random().toString(16).slice(2)}`;
        tokens.set(token, name);
        return send(200, { token });
      }
      if (url.pathname === "/login")
        return html(
          200,
          '<form method="post" action="/login"><input name="username"><input type="password" name="password"></form>',
        );
      const viewer = tokens.get((request.headers.authorization ?? "").replace(/^Bearer /, ""));
      if (/^\/api\/(loose|strict)\/profile$|^\/api\/strict\/(moved|page)$/.test(url.pathname)) {
        if (viewer) {
          if (url.pathname.endsWith("/page")) return html(200, "<h1>Your page</h1>");
          return send(200, { name: viewer });
        }
        if (url.pathname === "/api/strict/profile") return send(401, { error: "sign in" });
        if (url.pathname === "/api/strict/moved") return html(302, "", "/api/strict/profile");
        return html(302, "", `/login?next=${encodeURIComponent(url.pathname)}`);
      }
      const match = url.pathname.match(
        /^\/api\/(loose|strict)\/(records|inbox)(?:\/(\d+|[^/]+))?(?:\/(confirm))?$/,
      );
      if (!match) return send(404, { error: "no such route" });
      const [, flavour, collection, rawId, action] = match;
      const loose = flavour === "loose";
      const user = tokens.get((request.headers.authorization ?? "").replace(/^Bearer /, ""));
      if (!user)
        return loose ? send(200, { error: "login required" }) : send(401, { error: "login required" });
      if (collection === "inbox") return send(200, { items: [{ subject: "welcome" }] });
      const mine = rows.filter((row) => row.owner === user && row.title.startsWith(flavour!));
      const view = (row: Row) => ({
        id: row.id,
        title: row.title.slice(flavour!.length + 1),
        quantity: row.quantity,
        status: row.status,
      });
      if (rawId === undefined) {
        if (method === "GET") return send(200, { items: mine.map(view) });
        if (method === "POST") {
          const title = typeof body.title === "string" ? body.title : "";
          if (!title) return send(400, { error: "title is required" });
          if (mine.some((row) => row.title === `${flavour}:${title}`))
            return send(409, { error: "title taken" });
          const row = {
            id: next++,
            owner: user,
            title: `${flavour}:${title}`,
            quantity: 1,
            status: "pending",
          };
          rows.push(row);
          return send(201, view(row));
        }
        return send(405, { error: "method not allowed" });
      }
      const id = Number(rawId);
      const row = mine.find((candidate) => candidate.id === id);
      if (!row) {
        if (method === "DELETE" && loose && deleted.has(id))
          return send(500, { error: "TypeError: row is undefined" });
        return loose && method === "GET"
          ? send(200, { error: "record not found" })
          : send(404, { error: "not found" });
      }
      if (action === "confirm") {
        if (loose) row.status = "confirmed";
        return send(200, view(row));
      }
      if (method === "GET") return send(200, view(row));
      if (method === "PUT") {
        const quantity = Number(body.quantity);
        if (!Number.isInteger(quantity) || quantity < 1)
          return send(400, { error: "quantity must be a positive integer" });
        row.quantity = loose ? row.quantity + quantity : quantity;
        if (typeof body.title === "string") row.title = `${flavour}:${body.title}`;
        return send(200, view(row));
      }
      if (method === "DELETE") {
        rows.splice(rows.indexOf(row), 1);
        deleted.add(id);
        return send(204);
      }
      return send(405, { error: "method not allowed" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    document: statusDocument(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function statusDocument(): Record<string, unknown> {
  const record = {
    type: "object",
    properties: {
      id: { type: "integer" },
      title: { type: "string" },
      quantity: { type: "integer" },
      status: { type: "string" },
    },
    required: ["id", "title", "quantity", "status"],
  };
  const json = (schema: unknown) => ({ content: { "application/json": { schema } } });
  const error = {
    description: "error",
    ...json({ type: "object", properties: { error: { type: "string" } } }),
  };
  const paths: Record<string, unknown> = {
    "/api/login": {
      post: {
        security: [],
        requestBody: json({
          type: "object",
          properties: { username: { type: "string" }, password: { type: "string" } },
          required: ["username", "password"],
        }),
        responses: { "200": { description: "token" }, "401": error },
      },
    },
  };
  for (const flavour of ["loose", "strict"]) {
    const base = `/api/${flavour}/records`;
    const id = [{ name: "id", in: "path", required: true, schema: { type: "integer" } }];
    paths[base] = {
      get: {
        responses: {
          "200": {
            description: "list",
            ...json({ type: "object", properties: { items: { type: "array", items: record } } }),
          },
          "401": error,
        },
      },
      post: {
        requestBody: json({
          type: "object",
          properties: { title: { type: "string", maxLength: 60 } },
          required: ["title"],
        }),
        // The correct twin documents the conflict a repeated creation meets.
        responses: {
          "201": { description: "created", ...json(record) },
          "400": error,
          "401": error,
          ...(flavour === "strict" ? { "409": error } : {}),
        },
      },
    };
    paths[`${base}/{id}`] = {
      get: {
        parameters: id,
        responses: { "200": { description: "one", ...json(record) }, "401": error, "404": error },
      },
      put: {
        parameters: id,
        requestBody: json({
          type: "object",
          properties: { title: { type: "string", maxLength: 60 }, quantity: { type: "integer", minimum: 1 } },
          required: ["quantity"],
        }),
        responses: {
          "200": { description: "updated", ...json(record) },
          "400": error,
          "401": error,
          "404": error,
        },
      },
      delete: { parameters: id, responses: { "204": { description: "gone" }, "401": error, "404": error } },
    };
    // Action routes often name the id their own way: the probe must still tie it to the record it made.
    paths[`${base}/{recordId}/confirm`] = {
      get: {
        parameters: [{ ...id[0]!, name: "recordId" }],
        responses: { "200": { description: "state", ...json(record) }, "401": error, "404": error },
      },
    };
    paths[`/api/${flavour}/inbox`] = {
      get: { responses: { "200": { description: "inbox", ...json({ type: "object" }) }, "401": error } },
    };
    paths[`/api/${flavour}/profile`] = {
      get: { responses: { "200": { description: "me", ...json({ type: "object" }) }, "401": error } },
    };
  }
  paths["/api/strict/moved"] = {
    get: {
      responses: {
        "200": { description: "me", ...json({ type: "object" }) },
        "302": { description: "moved" },
      },
    },
  };
  paths["/api/strict/page"] = {
    get: {
      responses: { "200": { description: "page", content: { "text/html": { schema: { type: "string" } } } } },
    },
  };
  return {
    openapi: "3.0.3",
    info: { title: "status fixture", version: "1" },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}
