import http from "node:http";
import type { AddressInfo } from "node:net";

// Two small undocumented JSON APIs on one server, for the oracles that judge statuses without a document.
// Under /a the creations answer 201 except `projects` (200: the inconsistent one); reads of a missing id
// answer 200 `null` (`notes`), 200 `{"memo": null}` (`memos`), 404 (`tags`, the correct twin), `[]`
// where the known id answers a list too (`folders`, a filter) or `{"found": false}` (`badges`, an error
// body another oracle judges). `settings` is an upsert answering 200 with the same object every time and
// `POST /a/notes/{id}/copy` an action. Under /b every creation answers 200: consistent, not a defect.

export interface UndocumentedStatusServer {
  baseUrl: string;
  document: Record<string, unknown>;
  close(): Promise<void>;
}

interface Collection {
  created: 200 | 201;
  /** How a read of a missing id is answered. */
  missing: "404" | "null" | "envelope-null" | "list" | "found-false";
  /** How a read of a known id is answered. */
  read: "object" | "envelope" | "list";
}

const API: Record<string, Record<string, Collection>> = {
  a: {
    notes: { created: 201, missing: "null", read: "object" },
    memos: { created: 201, missing: "envelope-null", read: "envelope" },
    tags: { created: 201, missing: "404", read: "object" },
    folders: { created: 201, missing: "list", read: "list" },
    badges: { created: 201, missing: "found-false", read: "object" },
    projects: { created: 200, missing: "404", read: "object" },
  },
  b: {
    notes: { created: 200, missing: "404", read: "object" },
    tags: { created: 200, missing: "404", read: "object" },
    projects: { created: 200, missing: "404", read: "object" },
  },
};

export async function startUndocumentedStatusServer(): Promise<UndocumentedStatusServer> {
  const rows = new Map<string, Array<{ id: number; title: string }>>();
  const settings = { id: 1, theme: "light" };
  let next = 1;
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
      const method = request.method ?? "GET";
      const url = new URL(request.url ?? "/", "http://fixture");
      let body: Record<string, unknown> = {};
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        return send(400, { error: "malformed JSON" });
      }
      if (url.pathname === "/a/settings") {
        if (method === "POST" && typeof body.theme === "string") settings.theme = body.theme;
        return send(200, settings);
      }
      const match = url.pathname.match(/^\/(a|b)\/([a-z]+)(?:\/(\d+))?(\/copy)?$/);
      const collection = match ? API[match[1]!]?.[match[2]!] : undefined;
      if (!match || !collection) return send(404, { error: "no such route" });
      const key = `${match[1]}/${match[2]}`;
      const list = rows.get(key) ?? [];
      rows.set(key, list);
      if (match[3] === undefined) {
        if (method === "GET") return send(200, { items: list });
        if (method !== "POST") return send(405, { error: "method not allowed" });
        const title = typeof body.title === "string" ? body.title : "";
        if (!title) return send(400, { error: "title is required" });
        const row = { id: next++, title };
        list.push(row);
        return send(collection.created, row);
      }
      const row = list.find((candidate) => candidate.id === Number(match[3]));
      if (match[4]) {
        if (method !== "POST" || !row) return send(404, { error: "not found" });
        const copy = { id: next++, title: `${row.title} (copy)` };
        list.push(copy);
        return send(200, copy);
      }
      if (method !== "GET") return send(405, { error: "method not allowed" });
      if (!row) {
        if (collection.missing === "null") return send(200, null);
        if (collection.missing === "envelope-null") return send(200, { memo: null });
        if (collection.missing === "list") return send(200, []);
        if (collection.missing === "found-false") return send(200, { found: false });
        return send(404, { error: "not found" });
      }
      if (collection.read === "envelope") return send(200, { memo: row });
      if (collection.read === "list") return send(200, [{ id: 1, name: `in ${row.title}` }]);
      return send(200, row);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    document: documentOf(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A document for the request shapes; the tests strip its statuses to stand for a source reader's map. */
function documentOf(): Record<string, unknown> {
  const json = (schema: unknown) => ({ content: { "application/json": { schema } } });
  const record = {
    type: "object",
    properties: { id: { type: "integer" }, title: { type: "string" } },
    required: ["id", "title"],
  };
  const create = json({
    type: "object",
    properties: { title: { type: "string", minLength: 3, maxLength: 40 } },
    required: ["title"],
  });
  const id = [{ name: "id", in: "path", required: true, schema: { type: "integer" } }];
  const paths: Record<string, unknown> = {
    "/a/settings": {
      get: { responses: { "200": { description: "settings" } } },
      post: {
        requestBody: json({ type: "object", properties: { theme: { type: "string" } }, required: ["theme"] }),
        responses: { "200": { description: "saved" } },
      },
    },
    "/a/notes/{id}/copy": {
      post: { parameters: id, responses: { "200": { description: "the copy", ...json(record) } } },
    },
  };
  for (const [api, collections] of Object.entries(API)) {
    for (const name of Object.keys(collections)) {
      paths[`/${api}/${name}`] = {
        get: { responses: { "200": { description: "list" } } },
        post: { requestBody: create, responses: { "201": { description: "created", ...json(record) } } },
      };
      paths[`/${api}/${name}/{id}`] = {
        get: { parameters: id, responses: { "200": { description: "one" }, "404": { description: "none" } } },
      };
    }
  }
  return { openapi: "3.0.3", info: { title: "undocumented status fixture", version: "1" }, paths };
}
