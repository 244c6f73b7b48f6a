import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { check } from "../../src/guardrails/check.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { browserStepTools } from "../../src/tools/servers/browser-steps-server.ts";
import type { ToolDefinition } from "../../src/tools/tool.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { testAgent } from "../support/fake-run-context.ts";

// The browser step tools drive a real Chromium against a local site: they open pages and report what the
// page did, find elements by role and name, operate them and say what happened, and refuse a destructive
// control unless the page shows a record the run created — checked on the element actually found.

let server: http.Server;
let baseUrl: string;
const deleted: string[] = [];

const page = (body: string) =>
  `<!doctype html><html lang="en"><head><title>t</title></head><body>${body}</body></html>`;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = request.url ?? "/";
    const html = (body: string, status = 200) =>
      response.writeHead(status, { "content-type": "text/html" }).end(page(body));
    if (request.method === "POST" && url === "/items") {
      response.writeHead(303, { location: "/items/42" }).end();
    } else if (request.method === "POST" && url.endsWith("/delete")) {
      deleted.push(url);
      response.writeHead(303, { location: "/" }).end();
    } else if (url === "/") {
      html(`<h1>Home</h1><script>console.error("chart element missing")</script>
        <button id="d" onclick="document.getElementById('p').hidden=false">Show details</button>
        <div id="p" hidden>Details here</div>
        <form method="post" action="/items"><label>Title <input name="title"></label><button>Create item</button></form>
        <a href="/shared">Shared item</a>`);
    } else if (url === "/items/42" || url === "/shared") {
      const action = url === "/shared" ? "/shared/delete" : "/items/42/delete";
      html(
        `<h1>Item</h1><form method="post" action="${action}"><button data-testid="go">Delete item</button></form>`,
      );
    } else html("<h1>Not found</h1>", 404);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function stepContext() {
  process.env.QAAS_STEP_TEST_PASSWORD = "correct horse battery";
  const profile = profileFor({
    name: "site",
    source: {},
    environment: { mode: "managed", base_url: baseUrl },
    users: [{ name: "mia", role: "member", username: "mia", password: "secret_ref:QAAS_STEP_TEST_PASSWORD" }],
  });
  const map = systemMapFor({
    target: "site",
    baseUrl,
    document: { openapi: "3.0.3", info: { title: "s", version: "1" }, paths: {} },
  });
  const context = probeContext({ profile, map, agent: "BROWSER" });
  context.agent = testAgent({ name: "BROWSER", tools: browserStepTools.map((tool) => tool.name) });
  return context;
}

function tool(name: string): ToolDefinition {
  return browserStepTools.find((candidate) => candidate.name === name)!;
}

/** A step as the runner makes it: the guardrails judge it first. */
async function step(context: ReturnType<typeof stepContext>, name: string, input: unknown) {
  const definition = tool(name);
  const parsed = definition.input.parse(input);
  const decision = check(context.agent, definition, parsed, context);
  if (!decision.allowed)
    return { ok: false as const, error: `refused (${decision.rule}): ${decision.reason}` };
  return definition.run(parsed, context);
}

describe("browser step tools", () => {
  it("opens a page, reports its console error, finds and operates a control, and checks what it shows", async () => {
    const context = stepContext();
    try {
      const opened = await step(context, "navigate", { path: "/" });
      expect(opened).toMatchObject({
        ok: true,
        data: { status: 200, console_errors: ["chart element missing"] },
      });
      const tree = await step(context, "accessibility_tree", {});
      expect(tree).toMatchObject({
        ok: true,
        data: { tree: expect.stringContaining('button "Show details"') },
      });
      const found = await step(context, "locate", { target: { role: "button", name: "Show details" } });
      expect(found).toMatchObject({ ok: true, data: { count: 1 } });
      const hidden = await step(context, "expect", { text: "Details here", timeout_ms: 300 });
      expect(hidden).toMatchObject({ ok: true, data: { verdict: "fail", code: "EXPECT_TEXT_MISSING" } });
      const clicked = await step(context, "act", {
        action: "click",
        target: { role: "button", name: "Show details" },
      });
      expect(clicked).toMatchObject({ ok: true, data: { page_changed: true } });
      const shown = await step(context, "expect", { text: "Details here" });
      expect(shown).toMatchObject({ ok: true, data: { verdict: "pass" } });
      const scanned = await step(context, "axe", { impacts: ["serious", "critical", "moderate", "minor"] });
      expect(scanned).toMatchObject({ ok: true, data: { violations: expect.any(Array) } });
      expect(await step(context, "trace", { action: "stop" })).toMatchObject({ ok: false });
      expect(await step(context, "trace", { action: "start" })).toMatchObject({ ok: true });
      await step(context, "navigate", { path: "/shared" });
      const traced = await step(context, "trace", { action: "stop" });
      expect(traced).toMatchObject({
        ok: true,
        data: { artifact: expect.stringMatching(/trace-\d+\.zip$/) },
      });
      const shot = await step(context, "screenshot", { label: "details" });
      expect(shot).toMatchObject({ ok: true, data: { artifact: expect.stringMatching(/\.png$/) } });
    } finally {
      await closeRunServices(context);
    }
  }, 60_000);

  it("refuses a delete control on a record the run did not create, even named by test id, and allows it on its own", async () => {
    const context = stepContext();
    try {
      await step(context, "navigate", { path: "/shared" });
      const byName = await step(context, "act", {
        action: "click",
        target: { role: "button", name: "Delete item" },
      });
      expect(byName).toMatchObject({ ok: false, error: expect.stringMatching(/refused \(destructive-ui\)/) });
      const byTestId = await step(context, "act", { action: "click", target: { test_id: "go" } });
      expect(byTestId).toMatchObject({ ok: false, error: expect.stringMatching(/delete/) });
      expect(deleted).toEqual([]);
      // A record of the run's own: created through the form, then deleted from its page.
      await step(context, "navigate", { path: "/" });
      await step(context, "act", { action: "fill", target: { name: "Title" }, value: "mine" });
      const created = await step(context, "act", {
        action: "click",
        target: { role: "button", name: "Create item" },
      });
      expect(created).toMatchObject({ ok: true, data: { url_after: `${baseUrl}/items/42` } });
      const removed = await step(context, "act", {
        action: "click",
        target: { role: "button", name: "Delete item" },
      });
      expect(removed).toMatchObject({ ok: true });
      expect(deleted).toEqual(["/items/42/delete"]);
    } finally {
      await closeRunServices(context);
    }
  }, 60_000);

  it("refuses a page of another origin and a credential written as text", async () => {
    const context = stepContext();
    try {
      const away = await step(context, "navigate", { path: "http://127.0.0.1:1/elsewhere" });
      expect(away).toMatchObject({ ok: false, error: expect.stringMatching(/not the target/) });
      await step(context, "navigate", { path: "/" });
      const typed = await step(context, "act", {
        action: "fill",
        target: { name: "Title" },
        value: "correct horse battery",
      });
      expect(typed).toMatchObject({ ok: false, error: expect.stringMatching(/credential.*secret_ref/) });
      const byRef = await step(context, "act", {
        action: "fill",
        target: { name: "Title" },
        secret_ref: "secret_ref:QAAS_STEP_TEST_PASSWORD",
      });
      expect(byRef).toMatchObject({ ok: true });
      const crawl = await step(context, "crawl", { max_pages: 5 });
      expect(crawl).toMatchObject({ ok: true });
      const paths = (crawl as { data: { pages: Array<{ path: string }> } }).data.pages.map(
        (entry) => entry.path,
      );
      expect(paths).toEqual(["/", "/shared"]);
    } finally {
      await closeRunServices(context);
    }
  }, 60_000);
});
