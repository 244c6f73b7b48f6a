import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Semaphore } from "../../src/probes/http/concurrency.ts";
import { HttpClient, RequestBudget } from "../../src/probes/http/http-client.ts";

// A list too long to keep whole (the unbounded one a probe must count) is still parsed whole; only the
// kept body text is cut.

const ITEMS = 6000;
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  const items = Array.from({ length: ITEMS }, (_, id) => ({ id, name: `item ${id}`, note: "x".repeat(80) }));
  const body = JSON.stringify({ items });
  server = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("an answer longer than the kept body", () => {
  it("keeps a cut body but parses every item", async () => {
    const client = new HttpClient({
      limiter: new Semaphore(2),
      budget: new RequestBudget(5),
      writesAllowed: false,
    });
    const exchange = await client.send({ method: "GET", url: `${baseUrl}/items`, headers: {} });
    expect(exchange.response?.truncated).toBe(true);
    expect(exchange.response!.body.length).toBeLessThan(JSON.stringify(exchange.response!.json).length);
    expect((exchange.response!.json as { items: unknown[] }).items).toHaveLength(ITEMS);
  });
});
