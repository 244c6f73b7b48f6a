import http from "node:http";
import type { AddressInfo } from "node:net";
import { type APIRequestContext, request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokenLinkDrafts, LinkBook } from "../../src/probes/browser/link-findings.ts";
import { Masker } from "../../src/probes/http/masking.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// Link targets are checked within a bound: a list page linking many records of one template must not spend
// it before another page's broken link is reached. A few are checked at once (a busy machine's time bound
// then covers more of them), and the findings still follow the links' order.

let server: http.Server;
let baseUrl: string;
let api: APIRequestContext;
const hits: string[] = [];
let inFlight = 0;
let mostInFlight = 0;

beforeAll(async () => {
  server = http.createServer((incoming, response) => {
    const url = incoming.url ?? "/";
    hits.push(url);
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    const ok = /^\/items\/\d+$/.test(url);
    // A slow broken target: a quicker one linked after it answers first.
    setTimeout(
      () => {
        inFlight -= 1;
        response
          .writeHead(ok ? 200 : 404, { "content-type": "text/html" })
          .end(ok ? "<h1>item</h1>" : "gone");
      },
      url.startsWith("/slow/") ? 400 : 20,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api = await request.newContext();
});

afterAll(async () => {
  await api.dispose();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function linkScope(maxChecks: number) {
  const context = probeContext({
    profile: profileFor({ name: "links", source: {}, environment: { mode: "external", base_url: baseUrl } }),
    map: systemMapFor({ target: "links", baseUrl, document: { openapi: "3.0.0", paths: {} } }),
    agent: "BROWSER",
  });
  return {
    context,
    masker: new Masker(),
    baseUrl,
    role: "anonymous",
    operations: [],
    seen: new Set<string>(),
    checked: new Set<string>(),
    deadline: Date.now() + 60_000,
    maxChecks,
  };
}

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
    hits.length = 0;
    const { drafts, checked } = await brokenLinkDrafts(api, book, linkScope(5));
    expect(drafts.map((draft) => draft.location.value)).toEqual(["/orders/archive/{id}"]);
    expect(checked).toBe(5);
    // The broken target twice (the confirming request), then the list's records up to the bound.
    expect(hits.filter((url) => url.startsWith("/orders/"))).toHaveLength(2);
    expect(hits.filter((url) => url.startsWith("/items/")).sort()).toEqual([
      "/items/1",
      "/items/2",
      "/items/3",
      "/items/4",
    ]);
  });

  it("checks a few targets at once and reports them in the links' order, whichever answered first", async () => {
    const book = new LinkBook();
    book.add("/reports", [
      { url: `${baseUrl}/slow/archive/3`, text: "Archived report" },
      { url: `${baseUrl}/quick/drafts/4`, text: "Draft" },
      ...Array.from({ length: 6 }, (_, index) => ({ url: `${baseUrl}/items/${index + 1}`, text: "Item" })),
    ]);
    mostInFlight = 0;
    const { drafts } = await brokenLinkDrafts(api, book, linkScope(20));
    expect(drafts.map((draft) => draft.location.value)).toEqual(["/slow/archive/{id}", "/quick/drafts/{id}"]);
    expect(mostInFlight).toBeGreaterThan(1);
  });

  it("leaves alone a link to a record the run made (its text carries the run's marker): another probe may have deleted it", async () => {
    const book = new LinkBook();
    book.add("/notes", [
      { url: `${baseUrl}/notes/41`, text: "qaas-m3x9k1" },
      { url: `${baseUrl}/notes/archive/2`, text: "Archived note" },
    ]);
    hits.length = 0;
    const { drafts } = await brokenLinkDrafts(api, book, linkScope(20));
    expect(drafts.map((draft) => draft.location.value)).toEqual(["/notes/archive/{id}"]);
    expect(hits.filter((url) => url === "/notes/41")).toEqual([]);
  });
});
