import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import guidePlaybook from "../../src/agents/playbooks/guide.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { guideTools } from "../../src/tools/servers/guide-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { type FakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";

// A session that ends under GUIDE's walk (the server forgot the first sign-in, as a restarted server with
// in-memory sessions does) must not make the member's UI look as if it linked nothing: every member page
// would then be "reachable only by typing its URL" once the HTTP layer, signed in again, is served it.

function page(title: string, body: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
}

let server: http.Server;
let baseUrl: string;
let context: FakeRunContext;
let calls: Awaited<ReturnType<typeof runPlaybookDirectly>>;
let issued = 0;

beforeAll(async () => {
  process.env.GUIDE_FIXTURE_LOST = "lost-pw";
  server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    // Only sessions after the first are remembered: the first is the one the restart forgot.
    const token = (request.headers.authorization ?? "").replace(/^Bearer /, "");
    const member = /^t-\d+$/.test(token) && Number(token.slice(2)) > 1;
    const html = (body: string) => response.writeHead(200, { "content-type": "text/html" }).end(body);
    if (request.method === "POST" && path === "/api/login") {
      issued += 1;
      response
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ token: `t-${issued}` }));
      return;
    }
    if (path === "/login")
      return html(
        page(
          "Sign in",
          '<form method="post" action="/login"><input name="u"><input type="password" name="p"></form>',
        ),
      );
    if (!member) return void response.writeHead(302, { location: "/login" }).end();
    const nav = '<nav><a href="/">Home</a> <a href="/dashboard">Dashboard</a></nav>';
    if (path === "/") return html(page("Home", `${nav}<h1>Home</h1>`));
    if (path === "/dashboard") return html(page("Dashboard", `${nav}<h1>Dashboard</h1>`));
    response.writeHead(404, { "content-type": "text/html" }).end(page("Not found", "<h1>Not found</h1>"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const map = systemMapFor({
    target: "lost",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "lost", version: "1" }, paths: {} },
    extraOperations: ["/", "/dashboard"].map((path) => undocumented("GET", path)),
  });
  const profile = profileFor({
    name: "lost",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
    auth: { login: { kind: "json", endpoint: "POST /api/login", token_from: "body:token" } },
    users: [{ name: "lee", role: "member", password: "secret_ref:GUIDE_FIXTURE_LOST" }],
  });
  context = probeContext({ profile, map, agent: "GUIDE" });
  calls = await runPlaybookDirectly(guidePlaybook, guideTools, context);
}, 180_000);

afterAll(async () => {
  await closeRunServices(context);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("GUIDE when the member's session ends under the walk", () => {
  it("ends that walk as signed out and judges no page undiscoverable from it", () => {
    const navigation = calls.find((call) => call.tool === "check_navigation")?.result;
    if (!navigation?.ok) throw new Error("check_navigation failed");
    const { candidates, stats } = navigation.data as {
      candidates: EnvelopeDraft[];
      stats: {
        roles: Array<{ role: string; stopped?: string }>;
        undiscoverable: { skipped: Record<string, string[]> };
      };
    };
    expect(stats.roles.find((walk) => walk.role === "member")?.stopped).toBe("signed_out");
    expect(candidates.filter((draft) => draft.defect_class === "undiscoverable-feature")).toEqual([]);
    const skipped = Object.entries(stats.undiscoverable.skipped).find(([reason]) =>
      reason.includes("cut short"),
    );
    expect(skipped?.[0]).toContain("member (signed_out)");
    expect(skipped?.[1]).toContain("/dashboard");
  });
});
