import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import guidePlaybook from "../../src/agents/playbooks/guide.ts";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { guideTools } from "../../src/tools/servers/guide-server.ts";
import { probeContext, profileFor, systemMapFor, undocumented } from "../fixtures/probe-harness.ts";
import { type FakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";

// GUIDE walks as each role: a page only signed-in members are served is judged against what a member can
// reach (the member's menu links the dashboard; nothing links the team report). The builtin playbook runs
// both checks and emits what they answer.

const TOKEN = "member-token-7f3a";

function page(title: string, body: string): string {
  return `<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`;
}

let server: http.Server;
let baseUrl: string;
let context: FakeRunContext;
let calls: Awaited<ReturnType<typeof runPlaybookDirectly>>;

beforeAll(async () => {
  process.env.GUIDE_FIXTURE_MIA = "mia-pw";
  server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    const member = request.headers.authorization === `Bearer ${TOKEN}`;
    const html = (body: string) => response.writeHead(200, { "content-type": "text/html" }).end(body);
    if (request.method === "POST" && path === "/api/login") {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        const ok = (JSON.parse(body || "{}") as { password?: string }).password === "mia-pw";
        response
          .writeHead(ok ? 200 : 401, { "content-type": "application/json" })
          .end(JSON.stringify(ok ? { token: TOKEN } : { error: "no" }));
      });
      return;
    }
    const nav = `<nav><a href="/">Home</a>${member ? ' <a href="/dashboard">Dashboard</a>' : ""}</nav>`;
    if (path === "/") return html(page("Home", `${nav}<h1>Home</h1>`));
    if (path === "/dashboard" || path === "/team/report") {
      if (!member) return void response.writeHead(302, { location: "/" }).end();
      return html(page(path === "/dashboard" ? "Dashboard" : "Team report", `${nav}<h1>${path}</h1>`));
    }
    response.writeHead(404, { "content-type": "text/html" }).end(page("Not found", "<h1>Not found</h1>"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const map = systemMapFor({
    target: "team",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "team", version: "1" }, paths: {} },
    extraOperations: ["/", "/dashboard", "/team/report"].map((path) => undocumented("GET", path)),
  });
  const profile = profileFor({
    name: "team",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
    auth: { login: { kind: "json", endpoint: "POST /api/login", token_from: "body:token" } },
    users: [{ name: "mia", role: "member", password: "secret_ref:GUIDE_FIXTURE_MIA" }],
  });
  context = probeContext({ profile, map, agent: "GUIDE" });
  calls = await runPlaybookDirectly(guidePlaybook, guideTools, context);
}, 180_000);

afterAll(async () => {
  await closeRunServices(context);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("GUIDE as signed-in roles", () => {
  it("runs both checks and emits every candidate", () => {
    expect(calls.filter((call) => call.tool !== "emit_envelope").map((call) => call.tool)).toEqual([
      "check_navigation",
      "check_copy",
    ]);
    const navigation = calls.find((call) => call.tool === "check_navigation")?.result;
    if (!navigation?.ok) throw new Error("check_navigation failed");
    const drafts = (navigation.data as { candidates: EnvelopeDraft[] }).candidates;
    const emitted = calls.filter((call) => call.tool === "emit_envelope").map((call) => call.input);
    expect(emitted).toEqual(drafts);
  });

  it("flags the member-only page no member page links to, not the one the member's menu links", () => {
    const navigation = calls.find((call) => call.tool === "check_navigation")?.result;
    if (!navigation?.ok) throw new Error("check_navigation failed");
    const { candidates, stats } = navigation.data as {
      candidates: EnvelopeDraft[];
      stats: { roles: Array<{ role: string }>; undiscoverable: { skipped: Record<string, string[]> } };
    };
    expect(stats.roles.map((walk) => walk.role)).toEqual(["anonymous", "member"]);
    expect(candidates.map((draft) => draft.location.value)).toEqual(["/team/report"]);
    expect(candidates[0]?.summary).toMatch(/to member,/);
    expect(candidates[0]?.reproduction.curl).toContain("$");
    expect(stats.undiscoverable.skipped["linked from a reachable page"]).toContain("/dashboard");
  });
});
