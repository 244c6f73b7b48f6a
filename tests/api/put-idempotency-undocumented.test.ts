import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation, SystemMap } from "../../src/map/system-map.ts";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { callTool } from "../support/fake-run-context.ts";

// Undocumented stock items whose PUT requires a numeric quantity, while the map (a reader's guess) types
// every field as a string. The adding PUT adds the quantity to what is stored; the setting PUT replaces it.
// The list shows only id and title, so the PUT's own answers are the witness.

let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  let next = 1;
  const items = new Map<string, { id: number; kind: string; title: string; quantity: number }>();
  server = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on("end", () => {
      const send = (status: number, body: unknown) => {
        response.writeHead(status, { "content-type": "application/json" });
        response.end(JSON.stringify(body));
      };
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text || "{}") as Record<string, unknown>;
      } catch {
        return send(400, { error: "malformed JSON" });
      }
      const url = request.url ?? "";
      const collection = url.match(/^\/api\/(adding|setting)\/items$/);
      const item = url.match(/^\/api\/(adding|setting)\/items\/(\d+)$/);
      if (collection && request.method === "POST") {
        if (typeof body.title !== "string" || !body.title) return send(400, { error: "title is required" });
        const created = { id: next++, kind: collection[1]!, title: body.title, quantity: 0 };
        items.set(String(created.id), created);
        return send(201, { id: created.id, title: created.title });
      }
      if (collection && request.method === "GET") {
        const rows = [...items.values()].filter((row) => row.kind === collection[1]);
        return send(200, { items: rows.map((row) => ({ id: row.id, title: row.title })) });
      }
      if (item && request.method === "PUT") {
        const row = items.get(item[2]!);
        if (!row || row.kind !== item[1]) return send(404, { error: "not found" });
        const quantity = body.quantity;
        if (typeof body.title !== "string" || typeof quantity !== "number" || !Number.isInteger(quantity))
          return send(400, { error: "title and an integer quantity are required" });
        row.title = body.title;
        row.quantity = item[1] === "adding" ? row.quantity + quantity : quantity;
        return send(200, { id: row.id, title: row.title, quantity: row.quantity });
      }
      return send(404, { error: "no such route" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function withBody(operation: Operation, fields: string[]): Operation {
  const properties = Object.fromEntries(fields.map((field) => [field, { type: "string" }]));
  return {
    ...operation,
    request_body: {
      content_type: "application/json",
      required: true,
      schema: { type: "object", properties },
    },
  } as Operation;
}

function operationsOf(kind: string): Operation[] {
  const item = `/api/${kind}/items/{id}`;
  return [
    withBody(undocumented("POST", `/api/${kind}/items`), ["title"]),
    undocumented("GET", `/api/${kind}/items`),
    {
      ...withBody(undocumented("PUT", item), ["title", "quantity"]),
      parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
    } as Operation,
  ];
}

function mapOf(): SystemMap {
  return {
    ...systemMapFor({ target: "stock", baseUrl, document: { openapi: "3.0.3", paths: {} } }),
    openapi: null,
    operations: [...operationsOf("adding"), ...operationsOf("setting")],
  };
}

describe("a PUT that adds instead of replacing, without a document", () => {
  it("sends the refused guess again as the record with a numeric quantity, and flags only the adding PUT", async () => {
    const profile = profileFor({
      name: "stock",
      source: {},
      environment: { mode: "managed", base_url: baseUrl, allow_writes: true },
    });
    const context = probeContext({ profile, map: mapOf() });
    const definition = contractTools.find((candidate) => candidate.name === "probe_semantics")!;
    const result = await callTool(definition, {}, context);
    if (!result.ok) throw new Error(result.error);
    const found = summarize((result.data as { candidates: Parameters<typeof summarize>[0] }).candidates);
    expect(found.filter((line) => line.includes("put-not-idempotent"))).toEqual([
      "contract-drift PUT /api/adding/items/{id} [put-not-idempotent]",
    ]);
  });
});
