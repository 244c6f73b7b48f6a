import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slowOperationsFor } from "../../src/probes/http/slow-operations.ts";
import { probeUnbounded } from "../../src/probes/load/unbounded.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// The shapes an unbounded answer takes besides a list that ignores its limit: a feed that ignores it while
// others add to it between the reads, a page size applied but never capped, a collection without an item path (created items cannot be addressed), a report and a CSV
// export beside that collection. Look-alikes: a page size capped at 100, a report capped at 50.

let server: http.Server;
let baseUrl: string;
const rows = Array.from({ length: 260 }, (_, index) => ({ id: index + 1, title: `row ${index + 1}` }));
const notes = Array.from({ length: 120 }, (_, index) => ({ id: index + 1, text: `note ${index + 1}` }));
const feed = Array.from({ length: 300 }, (_, index) => ({ id: index + 1, title: `entry ${index + 1}` }));

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const json = (status: number, body: unknown) =>
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const size = (fallback: number) => Number(url.searchParams.get("limit") ?? fallback) || fallback;
    if (url.pathname === "/api/rows") return json(200, { items: rows.slice(0, size(20)) });
    if (url.pathname === "/api/feed") {
      // Everyone's activity: it grows while the probe reads it, and it ignores the limit.
      feed.push({ id: feed.length + 1, title: "someone did something" });
      return json(200, { items: feed });
    }
    if (url.pathname === "/api/pages") return json(200, { items: rows.slice(0, Math.min(size(20), 100)) });
    if (url.pathname === "/api/notes" && request.method === "POST") {
      notes.push({ id: notes.length + 1, text: "added" });
      return json(201, { ok: true });
    }
    if (url.pathname === "/api/notes") return json(200, notes);
    if (url.pathname === "/api/notes/report") return json(200, { rows: notes });
    if (url.pathname === "/api/notes/summary") return json(200, { rows: notes.slice(-50) });
    if (url.pathname === "/api/notes/export") {
      const csv = ["id,text", ...notes.map((note) => `${note.id},${note.text}`)].join("\n");
      return response.writeHead(200, { "content-type": "text/csv" }).end(`${csv}\n`);
    }
    return json(404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function shapesContext() {
  const paged = {
    parameters: [{ name: "limit", in: "query", schema: { type: "integer", minimum: 1 } }],
    responses: { "200": { description: "rows" } },
  };
  const read = { responses: { "200": { description: "rows" } } };
  const document = {
    openapi: "3.0.3",
    info: { title: "shapes", version: "1" },
    paths: {
      "/api/rows": { get: paged },
      "/api/feed": { get: paged },
      "/api/pages": { get: paged },
      // Documented but never served: skipped, saying how it answered.
      "/api/missing": { get: paged },
      "/api/notes": {
        get: read,
        post: {
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
              },
            },
          },
          responses: { "201": { description: "added" } },
        },
      },
      "/api/notes/report": { get: read },
      "/api/notes/summary": { get: read },
      "/api/notes/export": { get: read },
    },
  };
  const map = systemMapFor({ target: "shapes", baseUrl, document });
  const profile = profileFor({
    name: "shapes",
    source: {},
    environment: { mode: "managed", base_url: baseUrl, allow_writes: true },
  });
  return probeContext({ profile, map, agent: "LOAD" });
}

describe("probe_unbounded on answers of other shapes", () => {
  it("finds the uncapped page size, the collection without an item path, its report and its export", async () => {
    const outcome = await probeUnbounded(shapesContext(), {});
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value).sort()).toEqual([
      "GET /api/feed",
      "GET /api/notes",
      "GET /api/notes/export",
      "GET /api/notes/report",
      "GET /api/rows",
    ]);
    const uncapped = outcome.candidates.find((draft) => draft.location.value === "GET /api/rows")!;
    expect(uncapped.title).toMatch(/applies any limit it is asked for: limit=5000 returned 260 items/);
    const operations = outcome.stats.operations as Array<Record<string, unknown>>;
    expect(operations.find((entry) => entry.operation === "GET /api/missing")?.skipped).toMatch(
      /^no user got a 2xx answer \(last: answered 404 as /,
    );
  });

  it("reads a list the run leaves alone for answering slowly: every row is why it is slow", async () => {
    const context = shapesContext();
    const pacing = slowOperationsFor(context);
    // What other probes leave behind: two answers of the report in a row took 2 s, so it is paced now.
    for (let strike = 0; strike < 2; strike += 1) {
      expect(await pacing.enter("GET /api/notes/report")).toBe(true);
      pacing.leave("GET /api/notes/report", 2_000);
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(pacing.isPacedOut("GET /api/notes/report")).toBe(true);
    const outcome = await probeUnbounded(context, { operation: "GET /api/notes/report" });
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["GET /api/notes/report"]);
  });
});
