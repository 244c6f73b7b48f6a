import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { browsePages } from "../../src/probes/browser/browse-pages.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { anonymousPagesContext } from "./fixture-site.ts";

// Sideways overflow at phone width, caused once by the frame every page shares (a navigation bar that does
// not wrap) and once by one page's own content. The frame is one defect, reported once with the other
// pages as related places; the content overflow is its page's own.

const NAV = `<header class="topbar"><nav style="display:flex;gap:1rem;white-space:nowrap">${[
  "Dashboard",
  "Projects",
  "Search",
  "Reports",
  "Settings",
  "Help",
  "Account settings",
]
  .map((name) => `<a href="/${name.toLowerCase().replace(/\s+/g, "-")}">${name}</a>`)
  .join("")}</nav></header>`;

const page = (title: string, body: string, frame = NAV): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head><body>${frame}<main><h1>${title}</h1>${body}</main></body></html>`;

const PAGES: Record<string, string> = {
  "/alpha": page("Alpha", "<p>Short text.</p>"),
  "/beta": page("Beta", "<p>Other text.</p>"),
  "/gamma": page("Gamma", "<p>More text.</p>"),
  "/wide": page("Wide", '<div style="width:900px">A wide board.</div>', ""),
};

let server: http.Server;
let context: FakeRunContext;
let candidates: EnvelopeDraft[];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const body = PAGES[(request.url ?? "/").split("?")[0] as string];
    response.writeHead(body ? 200 : 404, { "content-type": "text/html" }).end(body ?? "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  context = anonymousPagesContext("frame", baseUrl, Object.keys(PAGES));
  const answer = await browsePages(context, { max_seconds: 150, checks: ["layout"] });
  if (typeof answer === "string") throw new Error(answer);
  candidates = answer.candidates;
}, 180_000);

afterAll(async () => {
  await closeRunServices(context);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("sideways overflow at phone width", () => {
  it("reports a shared frame that overflows once, naming the other pages, and a page's own content apart", () => {
    const overflows = candidates
      .filter((draft) => draft.defect_class === "visual-defect")
      .map((draft) => [draft.location.value, (draft.location.related ?? []).map((place) => place.value)]);
    expect(overflows).toEqual([
      ["/wide", []],
      ["/alpha", ["/beta", "/gamma"]],
    ]);
  });
});
