import { afterAll, beforeAll, describe, expect, it } from "vitest";
import guidePlaybook from "../../src/agents/playbooks/guide.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { guideTools } from "../../src/tools/servers/guide-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { type FakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";
import { startTextServer, type TextServer } from "../support/text-server.ts";

// A walk whose entry page could not be opened (the target restarting, a load that timed out on a busy
// machine) has seen no page of the UI: that nothing it saw links to a page says nothing, and every page
// served when typed afterwards would be called reachable only by its URL. A page that failed once is
// opened again after a moment, so a target back from a restart is still walked.

function page(title: string, body: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
}

let server: TextServer;
let context: FakeRunContext | undefined;
/** How many more times the entry drops the connection, or answers 503 (a target restarting). */
let drops = Number.POSITIVE_INFINITY;
let unavailable = 0;

beforeAll(async () => {
  server = await startTextServer((request, _text, response) => {
    const path = (request.url ?? "/").split("?")[0];
    const html = (body: string) => response.writeHead(200, { "content-type": "text/html" }).end(body);
    const nav =
      '<nav><a href="/">Home</a> <a href="/dashboard">Dashboard</a> <a href="/reports">Reports</a></nav>';
    if (path === "/" && drops > 0) {
      drops -= 1;
      return void request.socket.destroy();
    }
    if (path === "/" && unavailable > 0) {
      unavailable -= 1;
      return void response.writeHead(503, { "content-type": "text/html" }).end(page("Restarting", ""));
    }
    if (path === "/") return html(page("Home", `${nav}<h1>Home</h1>`));
    if (path === "/dashboard") return html(page("Dashboard", `${nav}<h1>Dashboard</h1>`));
    if (path === "/reports") return html(page("Reports", `${nav}<h1>Reports</h1>`));
    response.writeHead(404, { "content-type": "text/html" }).end(page("Not found", "<h1>Not found</h1>"));
  });
});

/** GUIDE's check_navigation on the site, in a run of its own. */
async function navigation(): Promise<{
  candidates: EnvelopeDraft[];
  stats: { undiscoverable: { skipped: Record<string, string[]> } };
}> {
  if (context) await closeRunServices(context);
  const map = systemMapFor({
    target: "dropped",
    baseUrl: server.baseUrl,
    document: { openapi: "3.0.3", info: { title: "dropped", version: "1" }, paths: {} },
    extraOperations: ["/", "/dashboard", "/reports"].map((path) => undocumented("GET", path)),
  });
  const profile = profileFor({
    name: "dropped",
    source: {},
    environment: { mode: "external", base_url: server.baseUrl },
  });
  context = probeContext({ profile, map, agent: "GUIDE" });
  const calls = await runPlaybookDirectly(guidePlaybook, guideTools, context);
  const checked = calls.find((call) => call.tool === "check_navigation")?.result;
  if (!checked?.ok) throw new Error("check_navigation failed");
  return checked.data as Awaited<ReturnType<typeof navigation>>;
}

afterAll(async () => {
  if (context) await closeRunServices(context);
  await server.close();
});

describe("GUIDE when the walk could not open the UI's entry", () => {
  it("judges no page undiscoverable, and says which walk saw no page", async () => {
    drops = Number.POSITIVE_INFINITY;
    unavailable = 0;
    const { candidates, stats } = await navigation();
    expect(candidates.filter((draft) => draft.defect_class === "undiscoverable-feature")).toEqual([]);
    const skipped = Object.entries(stats.undiscoverable.skipped).find(([reason]) =>
      reason.includes("cut short"),
    );
    expect(skipped?.[0]).toContain("anonymous (no page of the UI opened)");
    expect(skipped?.[1]).toEqual(expect.arrayContaining(["/dashboard", "/reports"]));
  }, 120_000);

  it("opens a page that failed once again, and walks on from it", async () => {
    drops = 0;
    unavailable = 1;
    const { candidates, stats } = await navigation();
    expect(unavailable).toBe(0);
    expect(candidates.filter((draft) => draft.defect_class === "undiscoverable-feature")).toEqual([]);
    expect(stats.undiscoverable.skipped["linked from a reachable page"]).toEqual(
      expect.arrayContaining(["/dashboard", "/reports"]),
    );
    expect(Object.keys(stats.undiscoverable.skipped).some((reason) => reason.includes("cut short"))).toBe(
      false,
    );
  }, 120_000);
});
