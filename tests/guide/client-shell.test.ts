import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { checkNavigation } from "../../src/probes/guide/check-navigation.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";

// A client-rendered application: the server answers the same shell to every path and a script renders the
// page and its menu. A path its router does not know answers 200 too (the shell), and renders "not found":
// that 200 proves nothing, so it is not an undiscoverable page. A routed page only a script-built menu
// links to counts as reachable.

const SHELL = `<!doctype html><html><head><title>Board</title><script src="/bundle.js" defer></script></head><body><div id="root"></div></body></html>`;

const BUNDLE = `
const root = document.getElementById("root");
const views = { "/": "Welcome", "/boards": "All boards", "/boards/5": "Board five" };
const nav = document.createElement("nav");
for (const [path, label] of [["/", "Home"], ["/bo" + "ards", "Boards"]]) {
  const a = document.createElement("a"); a.href = path; a.textContent = label; nav.appendChild(a);
}
root.appendChild(nav);
const main = document.createElement("main");
main.textContent = views[location.pathname] || "Page not found";
if (location.pathname === "/boards") {
  const a = document.createElement("a"); a.href = "/boards/5"; a.textContent = "Board five"; main.appendChild(a);
}
root.appendChild(main);
`;

let server: http.Server;
let baseUrl: string;
let context: FakeRunContext;
let outcome: { candidates: EnvelopeDraft[]; stats: Record<string, unknown> };

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (path === "/bundle.js")
      return void response.writeHead(200, { "content-type": "application/javascript" }).end(BUNDLE);
    response.writeHead(200, { "content-type": "text/html" }).end(SHELL);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const map = systemMapFor({
    target: "board",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "board", version: "1" }, paths: {} },
    // Traffic once saw these paths; the router knows neither, so both render "not found".
    extraOperations: [
      undocumented("GET", "/legacy-exports", ["traffic"]),
      undocumented("GET", "/boards/{id}"),
    ],
  });
  const profile = profileFor({
    name: "board",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
  });
  context = probeContext({ profile, map, agent: "GUIDE" });
  const result = await checkNavigation(context, { max_seconds: 90 });
  if (typeof result === "string") throw new Error(result);
  outcome = result;
}, 120_000);

afterAll(async () => {
  await closeRunServices(context);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("check_navigation on a client-rendered shell", () => {
  it("does not flag a path the shell answers like any unknown path", () => {
    expect(outcome.candidates.filter((draft) => draft.defect_class === "undiscoverable-feature")).toEqual([]);
    const skipped = (outcome.stats.undiscoverable as { skipped: Record<string, string[]> }).skipped;
    expect(skipped["indistinguishable from an unknown path (catch-all shell)"]).toContain("/legacy-exports");
  });

  it("follows links the bundle renders, so the routed pages count as reached", () => {
    const skipped = (outcome.stats.undiscoverable as { skipped: Record<string, string[]> }).skipped;
    expect(skipped["linked from a reachable page"]).toContain("/boards/{id}");
  });

  it("does not call a rendered page with a script-built menu a dead end", () => {
    expect(outcome.candidates.filter((draft) => draft.defect_class === "dead-end")).toEqual([]);
  });
});
