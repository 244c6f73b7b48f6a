import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import guidePlaybook from "../../src/agents/playbooks/guide.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { guideTools } from "../../src/tools/servers/guide-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { type FakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";

// A walk whose entry page could not be opened (the target restarting, a load that timed out on a busy
// machine) has seen no page of the UI: that nothing it saw links to a page says nothing, and every page
// served when typed afterwards would be called reachable only by its URL.

function page(title: string, body: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
}

let server: http.Server;
let context: FakeRunContext;
let calls: Awaited<ReturnType<typeof runPlaybookDirectly>>;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    const html = (body: string) => response.writeHead(200, { "content-type": "text/html" }).end(body);
    const nav =
      '<nav><a href="/">Home</a> <a href="/dashboard">Dashboard</a> <a href="/reports">Reports</a></nav>';
    // The entry never answers as a page: the connection drops.
    if (path === "/") return void request.socket.destroy();
    if (path === "/dashboard") return html(page("Dashboard", `${nav}<h1>Dashboard</h1>`));
    if (path === "/reports") return html(page("Reports", `${nav}<h1>Reports</h1>`));
    response.writeHead(404, { "content-type": "text/html" }).end(page("Not found", "<h1>Not found</h1>"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const map = systemMapFor({
    target: "dropped",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "dropped", version: "1" }, paths: {} },
    extraOperations: ["/", "/dashboard", "/reports"].map((path) => undocumented("GET", path)),
  });
  const profile = profileFor({
    name: "dropped",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
  });
  context = probeContext({ profile, map, agent: "GUIDE" });
  calls = await runPlaybookDirectly(guidePlaybook, guideTools, context);
}, 180_000);

afterAll(async () => {
  await closeRunServices(context);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("GUIDE when the walk could not open the UI's entry", () => {
  it("judges no page undiscoverable, and says which walk saw no page", () => {
    const navigation = calls.find((call) => call.tool === "check_navigation")?.result;
    if (!navigation?.ok) throw new Error("check_navigation failed");
    const { candidates, stats } = navigation.data as {
      candidates: EnvelopeDraft[];
      stats: { undiscoverable: { skipped: Record<string, string[]> } };
    };
    expect(candidates.filter((draft) => draft.defect_class === "undiscoverable-feature")).toEqual([]);
    const skipped = Object.entries(stats.undiscoverable.skipped).find(([reason]) =>
      reason.includes("cut short"),
    );
    expect(skipped?.[0]).toContain("anonymous (no page of the UI opened)");
    expect(skipped?.[1]).toEqual(expect.arrayContaining(["/dashboard", "/reports"]));
  });
});
