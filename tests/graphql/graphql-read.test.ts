import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Semaphore } from "../../src/probes/http/concurrency.ts";
import { HttpClient, RequestBudget, WriteNotAllowedError } from "../../src/probes/http/http-client.ts";

let server: http.Server;
let url: string;
const received: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push(body);
      response.writeHead(200, { "content-type": "application/json" }).end('{"data":{}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const readOnlyClient = () =>
  new HttpClient({ limiter: new Semaphore(2), budget: new RequestBudget(50), writesAllowed: false });

const post = (body: unknown) => ({
  method: "POST",
  url,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("GraphQL reads on a target that allows no writes", () => {
  it("sends a POST whose every operation is a query of read-named fields, batched or not", async () => {
    const client = readOnlyClient();
    received.length = 0;
    await client.send(post({ query: "query Pastes { pastes(public: true) { id title } }" }));
    await client.send(post([{ query: "{ __typename }" }, { query: "{ me { id } }" }]));
    expect(received).toHaveLength(2);
  });

  it("refuses mutations, queries named like writes, fragments it cannot judge and bodies that are not GraphQL", async () => {
    const client = readOnlyClient();
    received.length = 0;
    for (const body of [
      { query: 'mutation { createPaste(title: "x") { id } }' },
      { query: "{ pastes { id } } mutation M { deleteAllPastes }" },
      { query: "query { deleteAllPastes }" },
      { query: "query { ...Everything } fragment Everything on Query { importPaste }" },
      [{ query: "{ pastes { id } }" }, { query: "mutation { reset }" }],
      { name: "not graphql" },
      { query: "{ not parsed" },
    ]) {
      await expect(client.send(post(body))).rejects.toBeInstanceOf(WriteNotAllowedError);
    }
    expect(received).toEqual([]);
  });
});
