import http from "node:http";
import type { AddressInfo } from "node:net";
import Database from "better-sqlite3";

// A small catalogue API for the SQL injection probe (node:http + SQLite in memory, no sign-in). Every
// `/v/...` operation pastes its input into SQL in one context and hides the error in one style; every
// `/s/...` operation is its safe look-alike (bound parameters, an allow-list, an integer cast, an escaped
// LIKE), plus one with no SQL at all that answers 500 to an odd number of quotes (a parser bug).

export interface SqliServer {
  baseUrl: string;
  document: Record<string, unknown>;
  /** Requests seen, by path. */
  requests: Map<string, number>;
  close(): Promise<void>;
}

const ITEMS = [
  { name: "anchor bolt", tag: "hardware", price: 120 },
  { name: "brass hinge", tag: "hardware", price: 340 },
  { name: "cedar plank", tag: "timber", price: 990 },
  { name: "drill bit", tag: "tools", price: 75 },
  { name: "elm board", tag: "timber", price: 640 },
];

const text = { type: "string" };
const query = (name: string, schema: Record<string, unknown> = text) => ({ name, in: "query", schema });
const ok = { "200": { description: "ok" } };
const get = (parameters: unknown[]) => ({ get: { parameters, responses: ok } });
const post = (content: string, schema: Record<string, unknown>) => ({
  post: { requestBody: { required: true, content: { [content]: { schema } } }, responses: ok },
});
const idPath = [{ name: "id", in: "path", required: true, schema: { type: "integer" } }];
const tagsFilter = {
  type: "object",
  required: ["filter"],
  properties: {
    filter: {
      type: "object",
      required: ["tags"],
      properties: { tags: { type: "array", items: text } },
    },
  },
};
const upload = { type: "object", required: ["title"], properties: { title: text } };
const lookup = { type: "object", required: ["code"], properties: { code: text } };
const signIn = { type: "object", required: ["username"], properties: { username: text } };

export const sqliDocument = {
  openapi: "3.0.3",
  info: { title: "catalogue", version: "1.0.0" },
  paths: {
    "/v/items": get([query("name")]),
    "/v/items/{id}": get(idPath),
    "/v/search": get([query("q")]),
    "/v/sorted": get([query("sort")]),
    "/v/page": get([query("limit", { type: "integer", example: 2 })]),
    "/v/by-tag": get([{ name: "X-Tag", in: "header", schema: text }]),
    "/v/by-pref": get([{ name: "pref", in: "cookie", schema: text }]),
    "/v/filter": post("application/json", tagsFilter),
    "/v/upload": post("multipart/form-data", upload),
    "/v/redeem": post("application/json", lookup),
    "/v/query": post("application/json", lookup),
    "/v/sign-in": post("application/json", signIn),
    "/s/items": get([query("name")]),
    "/s/items/{id}": get(idPath),
    "/s/search": get([query("q")]),
    "/s/sorted": get([query("sort")]),
    "/s/page": get([query("limit", { type: "integer", example: 2 })]),
    "/s/by-tag": get([{ name: "X-Tag", in: "header", schema: text }]),
    "/s/echo": get([query("text")]),
    "/s/strict": get([query("id")]),
    "/s/filter": post("application/json", tagsFilter),
    "/s/redeem": post("application/json", lookup),
    "/s/query": post("application/json", lookup),
    "/s/sign-in": post("application/json", signIn),
  },
};

type Answer = { status: number; body: unknown; location?: string };

export async function startSqliServer(): Promise<SqliServer> {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, tag TEXT, price INTEGER)");
  const insert = db.prepare("INSERT INTO items (name, tag, price) VALUES (?, ?, ?)");
  for (const item of ITEMS) insert.run(item.name, item.tag, item.price);
  const rows = (sql: string, ...values: unknown[]) => db.prepare(sql).all(...values);
  // PostgreSQL's pg_sleep as a table-valued function: a query that calls it holds its answer back that
  // long (the server waits after the query instead of blocking the event loop).
  let sleptSeconds = 0;
  db.table("pg_sleep", {
    columns: ["pg_sleep"],
    parameters: ["seconds"],
    *rows(seconds: unknown) {
      sleptSeconds += Math.min(Number(seconds) || 0, 1);
      yield { pg_sleep: "" };
    },
  });
  const columns = "id, name, tag, price";

  // The error styles a vulnerable operation hides its database error in.
  const bare500 = (run: () => unknown): Answer => {
    try {
      return { status: 200, body: { items: run() } };
    } catch {
      return { status: 500, body: { error: "internal error" } };
    }
  };
  const swallowed = (run: () => unknown, fallback: Answer): Answer => {
    try {
      return { status: 200, body: { items: run() } };
    } catch {
      return fallback;
    }
  };
  const verbatim = (run: () => unknown): Answer => {
    try {
      return { status: 200, body: { items: run() } };
    } catch (error) {
      return { status: 500, body: { error: (error as Error).message } };
    }
  };

  const handle = (method: string, url: URL, headers: http.IncomingHttpHeaders, body: string): Answer => {
    const param = (name: string) => url.searchParams.get(name) ?? "";
    const cookie = (name: string) =>
      (headers.cookie ?? "")
        .split(";")
        .map((part) => part.trim().split("="))
        .find(([key]) => key === name)?.[1] ?? "";
    const path = url.pathname;
    const id = path.match(/^\/[vs]\/items\/([^/]+)$/)?.[1];
    if (method === "GET" && path === "/v/items")
      return bare500(() => rows(`SELECT ${columns} FROM items WHERE name = '${param("name")}'`));
    if (method === "GET" && id !== undefined && path.startsWith("/v/")) {
      const found = swallowed(
        () => rows(`SELECT ${columns} FROM items WHERE id = ${decodeURIComponent(id)}`),
        {
          status: 200,
          body: { items: [] },
        },
      );
      return (found.body as { items: unknown[] }).items.length > 0
        ? found
        : { status: 404, body: { error: "not found" } };
    }
    if (method === "GET" && path === "/v/search")
      return swallowed(() => rows(`SELECT ${columns} FROM items WHERE name LIKE '%${param("q")}%'`), {
        status: 200,
        body: { items: [] },
      });
    if (method === "GET" && path === "/v/sorted")
      return bare500(() => rows(`SELECT ${columns} FROM items ORDER BY ${param("sort") || "id"}`));
    if (method === "GET" && path === "/v/page")
      return swallowed(
        () => rows(`SELECT ${columns} FROM items ORDER BY id LIMIT ${param("limit") || "10"}`),
        {
          status: 200,
          body: { items: [] },
        },
      );
    if (method === "GET" && path === "/v/by-tag")
      return verbatim(() => rows(`SELECT ${columns} FROM items WHERE tag = '${headers["x-tag"] ?? ""}'`));
    if (method === "GET" && path === "/v/by-pref")
      return swallowed(
        () => rows(`SELECT ${columns} FROM items WHERE id = ${decodeURIComponent(cookie("pref")) || 0}`),
        {
          status: 200,
          body: { items: [] },
        },
      );
    if (method === "POST" && path === "/v/filter") {
      const tags = (JSON.parse(body) as { filter?: { tags?: unknown[] } }).filter?.tags ?? [];
      const list = tags.map((tag) => `'${String(tag)}'`).join(", ") || "''";
      return bare500(() => rows(`SELECT ${columns} FROM items WHERE tag IN (${list})`));
    }
    if (method === "POST" && path === "/v/upload") {
      const title = /name="title"\r\n\r\n([^\r]*)\r\n/.exec(body)?.[1] ?? "";
      return bare500(() => rows(`SELECT ${columns} FROM items WHERE (name = '${title}')`));
    }
    if (method === "POST" && (path === "/v/redeem" || path === "/v/query")) {
      // Errors swallowed and a code that matches nothing: every answer is the same empty list. A POST named
      // like a read (`query`) may be widened by OR; one that may write (`redeem`) is only ever timed.
      const code = String((JSON.parse(body) as { code?: unknown }).code ?? "");
      return swallowed(() => rows(`SELECT ${columns} FROM items WHERE (name = '${code}' AND price >= 0)`), {
        status: 200,
        body: { items: [] },
      });
    }
    if (method === "POST" && path === "/v/sign-in") {
      // A failed sign-in goes back to the form with the database's own message in the URL.
      const username = String((JSON.parse(body) as { username?: unknown }).username ?? "");
      try {
        const found = rows(`SELECT id FROM items WHERE name = '${username}'`);
        return { status: 302, body: {}, location: found.length > 0 ? "/home" : "/login?error=Unknown+user" };
      } catch (error) {
        return {
          status: 302,
          body: {},
          location: `/login?error=${encodeURIComponent((error as Error).message)}`,
        };
      }
    }
    // Safe look-alikes.
    if (method === "POST" && path === "/s/sign-in") {
      const username = String((JSON.parse(body) as { username?: unknown }).username ?? "");
      const found = rows("SELECT id FROM items WHERE name = ?", username);
      return { status: 302, body: {}, location: found.length > 0 ? "/home" : "/login?error=Unknown+user" };
    }
    if (method === "GET" && path === "/s/items")
      return {
        status: 200,
        body: { items: rows(`SELECT ${columns} FROM items WHERE name = ?`, param("name")) },
      };
    if (method === "GET" && id !== undefined && path.startsWith("/s/")) {
      const found = rows(
        `SELECT ${columns} FROM items WHERE id = ?`,
        Number.parseInt(decodeURIComponent(id), 10),
      );
      return found.length > 0
        ? { status: 200, body: { items: found } }
        : { status: 404, body: { error: "not found" } };
    }
    if (method === "GET" && path === "/s/search") {
      const escaped = param("q").replace(/[\\%_]/g, (char) => `\\${char}`);
      return {
        status: 200,
        body: { items: rows(`SELECT ${columns} FROM items WHERE name LIKE ? ESCAPE '\\'`, `%${escaped}%`) },
      };
    }
    if (method === "GET" && path === "/s/sorted") {
      const allowed: Record<string, string> = { name: "name", price: "price", id: "id" };
      return {
        status: 200,
        body: { items: rows(`SELECT ${columns} FROM items ORDER BY ${allowed[param("sort")] ?? "id"}`) },
      };
    }
    if (method === "GET" && path === "/s/page") {
      const limit = Number.parseInt(param("limit"), 10);
      return {
        status: 200,
        body: {
          items: rows(`SELECT ${columns} FROM items ORDER BY id LIMIT ?`, Number.isNaN(limit) ? 10 : limit),
        },
      };
    }
    if (method === "GET" && path === "/s/by-tag")
      return {
        status: 200,
        body: { items: rows(`SELECT ${columns} FROM items WHERE tag = ?`, headers["x-tag"] ?? "") },
      };
    if (method === "GET" && path === "/s/echo") {
      // No SQL at all: a naive quoted-string parser that breaks on an odd number of quotes.
      const quotes = (param("text").match(/['"]/g) ?? []).length;
      return quotes % 2 === 1
        ? { status: 500, body: { error: "internal error" } }
        : { status: 200, body: { items: ITEMS.slice(0, 2) } };
    }
    if (method === "GET" && path === "/s/strict") {
      if (!/^\d+$/.test(param("id"))) return { status: 400, body: { error: "id must be an integer" } };
      return {
        status: 200,
        body: { items: rows(`SELECT ${columns} FROM items WHERE id = ?`, Number(param("id"))) },
      };
    }
    if (method === "POST" && path === "/s/filter") {
      const tags = ((JSON.parse(body) as { filter?: { tags?: unknown[] } }).filter?.tags ?? []).map(String);
      const marks = tags.map(() => "?").join(", ") || "NULL";
      return {
        status: 200,
        body: { items: rows(`SELECT ${columns} FROM items WHERE tag IN (${marks})`, ...tags) },
      };
    }
    if (method === "POST" && (path === "/s/redeem" || path === "/s/query")) {
      const code = String((JSON.parse(body) as { code?: unknown }).code ?? "");
      return {
        status: 200,
        body: { items: rows(`SELECT ${columns} FROM items WHERE (name = ? AND price >= 0)`, code) },
      };
    }
    return { status: 404, body: { error: "no route" } };
  };

  const requests = new Map<string, number>();
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    requests.set(url.pathname, (requests.get(url.pathname) ?? 0) + 1);
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      let answer: Answer;
      sleptSeconds = 0;
      try {
        answer = handle(request.method ?? "GET", url, request.headers, Buffer.concat(chunks).toString());
      } catch {
        answer = { status: 400, body: { error: "bad request" } };
      }
      setTimeout(() => {
        response.writeHead(answer.status, {
          "content-type": "application/json",
          ...(answer.location ? { location: answer.location } : {}),
        });
        response.end(JSON.stringify(answer.body));
      }, sleptSeconds * 1000);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    document: sqliDocument,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        db.close();
        server.close(() => resolve());
      }),
  };
}
