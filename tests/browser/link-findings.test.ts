import http from "node:http";
import type { AddressInfo } from "node:net";
import { type APIRequestContext, request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokenLinkDrafts, LinkBook } from "../../src/probes/browser/link-findings.ts";
import { Masker } from "../../src/probes/http/masking.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// Link targets are checked within a bound: a list page linking many records of one template must not spend
// it before another page's broken link is reached.

let server: http.Server;
let baseUrl: string;
let api: APIRequestContext;
const hits: string[] = [];

beforeAll(async () => {
  server = http.createServer((incoming, response) => {
    const url = incoming.url ?? "/";
    hits.push(url);
    const ok = /^\/items\/\d+$/.test(url);
    response.writeHead(ok ? 200 : 404, { "content-type": "text/html" }).end(ok ? "<h1>item</h1>" : "gone");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api = await request.newContext();
});

afterAll(async () => {
  await api.dispose();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("brokenLinkDrafts", () => {
  it("checks one target per template before a second of any, so a bound of a few checks still reaches every page's links", async () => {
    const book = new LinkBook();
    book.add(
      "/items",
      Array.from({ length: 40 }, (_, index) => ({
        url: `${baseUrl}/items/${index + 1}`,
        text: `Item ${index + 1}`,
      })),
    );
    book.add("/orders", [{ url: `${baseUrl}/orders/archive/7`, text: "Old order" }]);
    const context = probeContext({
      profile: profileFor({
        name: "links",
        source: {},
        environment: { mode: "external", base_url: baseUrl },
      }),
      map: systemMapFor({ target: "links", baseUrl, document: { openapi: "3.0.0", paths: {} } }),
      agent: "BROWSER",
    });
    const { drafts, checked } = await brokenLinkDrafts(api, book, {
      context,
      masker: new Masker(),
      baseUrl,
      role: "anonymous",
      operations: [],
      seen: new Set(),
      checked: new Set(),
      deadline: Date.now() + 60_000,
      maxChecks: 5,
    });
    expect(drafts.map((draft) => draft.location.value)).toEqual(["/orders/archive/{id}"]);
    expect(checked).toBe(5);
    // The broken target twice (the confirming request), then the list's records up to the bound.
    expect(hits.filter((url) => url.startsWith("/orders/"))).toHaveLength(2);
    expect(hits.filter((url) => url.startsWith("/items/"))).toEqual([
      "/items/1",
      "/items/2",
      "/items/3",
      "/items/4",
    ]);
  });
});
