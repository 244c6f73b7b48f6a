import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contractTools } from "../../src/tools/servers/contract-server.ts";
import { probeContext, systemMapFor, writableProfile } from "../fixtures/probe-harness.ts";
import { summarize } from "../fixtures/targets.ts";
import { callTool } from "../support/fake-run-context.ts";

// Two kinds of memo whose reads look alike after a delete. `kept` memos are only marked deleted and still
// served (the defect). `replayed` memos are deleted for real, but the same create arrives again at once
// (another client replaying it, markers and all) and the freed id goes to the new row: the read after the
// delete shows the same id and text, and a later creation time.

interface Memo {
  id: number;
  kind: string;
  text: string;
  created_at: string;
}

let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  let next = 1;
  const rows = new Map<string, Memo>();
  server = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on("end", () => {
      const send = (status: number, body?: unknown) => {
        response.writeHead(status, body === undefined ? {} : { "content-type": "application/json" });
        response.end(body === undefined ? undefined : JSON.stringify(body));
      };
      const url = request.url ?? "";
      const collection = url.match(/^\/api\/(kept|replayed)\/memos$/);
      const item = url.match(/^\/api\/(kept|replayed)\/memos\/(\d+)$/);
      const shown = ({ kind: _kind, ...row }: Memo) => row;
      if (collection && request.method === "POST") {
        const body = JSON.parse(text || "{}") as { text?: unknown };
        if (typeof body.text !== "string") return send(400, { error: "text is required" });
        const row = {
          id: next++,
          kind: collection[1]!,
          text: body.text,
          created_at: new Date(Date.now() + next).toISOString(),
        };
        rows.set(String(row.id), row);
        return send(201, shown(row));
      }
      if (collection && request.method === "GET")
        return send(200, [...rows.values()].filter((row) => row.kind === collection[1]).map(shown));
      const row = item ? rows.get(item[2]!) : undefined;
      if (!item || !row || row.kind !== item[1]) return send(404, { error: "not found" });
      if (request.method === "GET") return send(200, shown(row));
      if (request.method === "DELETE") {
        // A kept memo is left as it was; a replayed one is gone, and the replay's row takes its id.
        if (row.kind === "replayed")
          rows.set(item[2]!, { ...row, created_at: new Date(Date.now() + 60_000).toISOString() });
        return send(204);
      }
      return send(405, { error: "method not allowed" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const memo = {
  type: "object",
  properties: { id: { type: "integer" }, text: { type: "string" }, created_at: { type: "string" } },
};
const pathsOf = (kind: string) => ({
  [`/api/${kind}/memos`]: {
    get: {
      responses: {
        "200": {
          description: "memos",
          content: { "application/json": { schema: { type: "array", items: memo } } },
        },
      },
    },
    post: {
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: { type: "object", required: ["text"], properties: { text: { type: "string" } } },
          },
        },
      },
      responses: { "201": { description: "created", content: { "application/json": { schema: memo } } } },
    },
  },
  [`/api/${kind}/memos/{id}`]: {
    parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
    get: {
      responses: {
        "200": { description: "the memo", content: { "application/json": { schema: memo } } },
        "404": { description: "not found" },
      },
    },
    delete: { responses: { "204": { description: "deleted" }, "404": { description: "not found" } } },
  },
});

describe("probe_semantics: a deleted record that stays readable", () => {
  it("is reported when the record read after the delete is the one created, not a new row under its id", async () => {
    const map = systemMapFor({
      target: "memos",
      baseUrl,
      document: {
        openapi: "3.0.3",
        info: { title: "memos", version: "1" },
        paths: { ...pathsOf("kept"), ...pathsOf("replayed") },
      },
    });
    const context = probeContext({ profile: writableProfile("memos", baseUrl), map, agent: "API" });
    const tool = contractTools.find((candidate) => candidate.name === "probe_semantics")!;
    const result = await callTool(tool, {}, context);
    if (!result.ok) throw new Error(result.error);
    const candidates = (result.data as { candidates: Parameters<typeof summarize>[0] }).candidates;
    expect(summarize(candidates).filter((line) => line.includes("deleted-still-readable"))).toEqual([
      "wrong-status DELETE /api/kept/memos/{id} [deleted-still-readable]",
    ]);
  });
});
