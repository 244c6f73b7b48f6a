import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp, type UserName } from "./helpers.ts";
import { openapi } from "./openapi.ts";

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.stop();
});

function links(html: string): string[] {
  return [...html.matchAll(/<a\s[^>]*href="([^"]+)"/g)].map((match) => match[1]!.replace(/&amp;/g, "&"));
}

function ids(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((match) => match[1]!));
}

/** Follows every same-site link from the entry page, like a visitor clicking around. */
async function crawl(user: UserName, entry = "/dashboard", limit = 500): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  const queue = [entry];
  while (queue.length > 0 && seen.size < limit) {
    const url = queue.shift()!;
    if (seen.has(url)) continue;
    const response = await app.request("GET", url, { as: user });
    seen.set(url, response.status === 200 ? response.text : `HTTP ${response.status}`);
    if (response.status !== 200 || !(response.headers.get("content-type") ?? "").startsWith("text/html"))
      continue;
    for (const href of links(response.text)) {
      if (
        !href.startsWith("/") ||
        href.startsWith("//") ||
        href.startsWith("/api/") ||
        href.startsWith("/static/")
      ) {
        continue;
      }
      if (!seen.has(href)) queue.push(href);
    }
  }
  return seen;
}

/** Controls that need an accessible name: no <label for>, no wrapping <label>, no aria-label. */
function unlabelledControls(html: string): string[] {
  const labelled = new Set([...html.matchAll(/<label[^>]*\sfor="([^"]+)"/g)].map((match) => match[1]!));
  const wrapped = [...html.matchAll(/<label[^>]*>[\s\S]*?<\/label>/g)].map((match) => match[0]);
  const missing: string[] = [];
  for (const match of html.matchAll(/<(input|select|textarea)\b([^>]*)>/g)) {
    const attributes = match[2]!;
    if (/type="(hidden|submit|button)"/.test(attributes)) continue;
    const id = attributes.match(/\sid="([^"]+)"/)?.[1];
    if (id && labelled.has(id)) continue;
    if (/aria-label(ledby)?=/.test(attributes)) continue;
    if (wrapped.some((label) => label.includes(match[0]))) continue;
    missing.push(match[0]);
  }
  return missing;
}

describe("seeded UI defects", () => {
  it("DEMO-31 the Reports link in the navigation bar leads to a 404", async () => {
    const dashboard = await app.request("GET", "/dashboard", { as: "alice" });
    expect(links(dashboard.text)).toContain("/reports");
    const reports = await app.request("GET", "/reports", { as: "alice" });
    expect(reports.status).toBe(404);
  });

  it("DEMO-32 /dashboard throws a TypeError in the browser console", async () => {
    const dashboard = await app.request("GET", "/dashboard", { as: "alice" });
    expect(dashboard.text).toContain('<script src="/static/dashboard.js" defer>');
    const present = ids(dashboard.text);
    const script = (await app.request("GET", "/static/dashboard.js")).text;
    const element = () => ({ textContent: "0", prepend() {}, innerHTML: "" });
    const sandbox = {
      window: { location: { protocol: "http:", host: "127.0.0.1" } },
      document: { getElementById: (id: string) => (present.has(id) ? element() : null) },
      WebSocket: class {
        addEventListener() {}
      },
      setTimeout,
    };
    let thrown: unknown;
    try {
      vm.runInNewContext(script, sandbox);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeDefined();
    expect((thrown as Error).name).toBe("TypeError");
    expect(present.has("velocity")).toBe(false);
    expect(present.has("velocity-chart")).toBe(true);
  });

  it("DEMO-33 /settings has form controls without a label", async () => {
    const settings = await app.request("GET", "/settings", { as: "adam" });
    const missing = unlabelledControls(settings.text);
    expect(missing.some((control) => control.includes('name="timezone"'))).toBe(true);
    expect(missing.some((control) => control.includes('name="webhook_url"'))).toBe(true);
    for (const page of [
      "/login",
      "/projects/new",
      "/projects/1/tasks/new",
      "/tasks/1",
      "/admin",
      "/search",
    ]) {
      const response = await app.request("GET", page, { as: page === "/login" ? undefined : "adam" });
      expect(unlabelledControls(response.text), page).toEqual([]);
    }
  });

  it("DEMO-34 the Export CSV button on /projects/{id} does nothing when clicked", async () => {
    const page = await app.request("GET", "/projects/1", { as: "alice" });
    const button = page.text.match(/<button[^>]*>Export CSV<\/button>/)?.[0];
    expect(button).toBeDefined();
    expect(button).toContain('type="button"');
    expect(button).not.toMatch(/data-action|data-download|onclick|\sid=/);
    const appJs = (await app.request("GET", "/static/app.js")).text;
    expect(appJs).not.toContain("data-export");
    expect(appJs).not.toContain("dataset.export");
    expect(page.text).not.toContain("/static/project");
  });
});

describe("seeded usability defects", () => {
  it("DEMO-35 /time works but no page links to it", async () => {
    const time = await app.request("GET", "/time", { as: "alice" });
    expect(time.status).toBe(200);
    expect(time.text).toContain("My timesheet");
    const reachable = new Set<string>();
    for (const user of ["alice", "adam"] as const) {
      for (const url of (await crawl(user)).keys()) reachable.add(url.split("?")[0]!);
    }
    expect(reachable.size).toBeGreaterThan(50);
    expect(reachable.has("/time")).toBe(false);
  });

  it("DEMO-36 /help promises a trash to restore deleted projects that does not exist", async () => {
    const help = await app.request("GET", "/help?topic=projects");
    expect(help.text).toContain("Deleting a project moves it to the trash");
    expect(help.text).toContain("Settings → Trash");
    const settings = await app.request("GET", "/settings", { as: "adam" });
    expect(settings.text).not.toMatch(/trash/i);
    expect(Object.keys(openapi.paths).some((path) => /trash|restore/i.test(path))).toBe(false);
    const created = await app.request("POST", "/api/projects", {
      as: "adam",
      body: { key: "TMP", name: "Tmp" },
    });
    await app.request("DELETE", `/api/projects/${created.json.id}`, { as: "adam" });
    const row = app.ctx.db
      .prepare("SELECT COUNT(*) AS n FROM projects WHERE id = ?")
      .get(created.json.id) as {
      n: number;
    };
    expect(row.n).toBe(0);
  });

  it("DEMO-37 /tasks/{id}/history has no navigation and no link back", async () => {
    const task = await app.request("GET", "/tasks/1", { as: "alice" });
    expect(links(task.text)).toContain("/tasks/1/history");
    const history = await app.request("GET", "/tasks/1/history", { as: "alice" });
    expect(history.status).toBe(200);
    expect(history.text).not.toContain("<nav");
    expect(links(history.text)).toEqual([]);
    expect(history.text).not.toContain("<button");
  });

  it("DEMO-45 the contact form thanks the person while its request fails", async () => {
    const support = await app.request("GET", "/support", { as: "alice" });
    expect(support.status).toBe(200);
    expect(support.text).toContain('id="support-form"');
    const dashboard = await app.request("GET", "/dashboard", { as: "alice" });
    expect(links(dashboard.text)).toContain("/support");
    const script = (await app.request("GET", "/static/support.js")).text;
    expect(script).toContain("/api/support-requests");
    // The answer is never read before the thank-you is shown.
    expect(script).not.toMatch(/\.ok\b|\.status\b/);
    expect(script).toContain("Your message was sent");
    const sent = await app.request("POST", "/api/support-requests", {
      as: "alice",
      body: { email: "someone@example.com", message: "Hello" },
    });
    expect(sent.status).toBe(404);
  });

  it("every other page a visitor reaches has the navigation bar", async () => {
    const pages = await crawl("adam", "/dashboard", 120);
    for (const [url, body] of pages) {
      if (body.startsWith("HTTP ") || url.endsWith("/history")) continue;
      expect(body, url).toContain('<nav aria-label="Main">');
    }
  });
});
