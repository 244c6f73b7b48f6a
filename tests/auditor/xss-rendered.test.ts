import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm, symlink } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import type { Operation, Page } from "../../src/map/system-map.ts";
import { ordered } from "../../src/probes/auditor/xss-rendered.ts";
import { BrowserSession } from "../../src/probes/browser/browser-session.ts";
import { closeRunServices } from "../../src/tools/run-end.ts";
import { probeXssTool } from "../../src/tools/servers/security-server.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";
import { callTool } from "../support/fake-run-context.ts";

// Stored XSS that only a browser sees: a JSON API stores notes and a static page's own script lists them.
// Inserted with innerHTML, the saved marker becomes an element: a finding, found through the real probe in
// the real Chromium. The same page setting the note as text, and a page the server renders with the note
// escaped, are the safe look-alikes and yield nothing.

type Mode = "markup" | "text" | "server";

interface NotesApp {
  baseUrl: string;
  notes: string[];
  close(): Promise<void>;
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const RENDER: Record<Mode, string> = {
  markup: `for (const note of notes) document.getElementById("list").innerHTML += "<li>" + note.text + "</li>";`,
  text: `for (const note of notes) { const li = document.createElement("li"); li.textContent = note.text; document.getElementById("list").append(li); }`,
  server: `document.title = "Board (" + notes.length + ")";`,
};

/** `signedIn`: notes and the board need the session cookie `POST /login` sets (401 without it). */
async function startApp(mode: Mode, signedIn = false): Promise<NotesApp> {
  const notes: string[] = [];
  const sessions = new Set<string>();
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const json = (status: number, value: unknown) =>
        response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (url.pathname === "/login" && request.method === "POST") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
        if (body.username !== "ann" || body.password !== ANN_PASSWORD) return json(401, { error: "no" });
        const sid = Math.random().toString(36).slice(2);
        sessions.add(sid);
        response.setHeader("set-cookie", `sid=${sid}; Path=/; HttpOnly`);
        return json(200, { ok: true });
      }
      const sid = /(?:^|;\s*)sid=([^;]+)/.exec(request.headers.cookie ?? "")?.[1];
      if (signedIn && !(sid && sessions.has(sid))) return json(401, { error: "sign in" });
      if (url.pathname === "/notes" && request.method === "POST") {
        let text: unknown;
        try {
          text = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { text?: unknown }).text;
        } catch {
          text = undefined;
        }
        if (typeof text !== "string" || text === "") return json(400, { error: "text is required" });
        notes.push(text);
        return json(201, { id: notes.length, text });
      }
      if (url.pathname === "/notes" && request.method === "GET")
        return json(
          200,
          notes.map((text, index) => ({ id: index + 1, text })),
        );
      if (url.pathname === "/board" && request.method === "GET") {
        const listed = mode === "server" ? notes.map((text) => `<li>${escapeHtml(text)}</li>`).join("") : "";
        const script = `fetch("/notes").then((answer) => answer.json()).then((notes) => { ${RENDER[mode]} });`;
        return response
          .writeHead(200, { "content-type": "text/html; charset=utf-8" })
          .end(
            `<!doctype html><html lang="en"><head><title>Board</title></head><body><ul id="list">${listed}</ul><script>${script}</script></body></html>`,
          );
      }
      // Pages with a script of their own that never shows a note: what the browser looks at in vain.
      if (url.pathname.startsWith("/help/") && request.method === "GET")
        return response
          .writeHead(200, { "content-type": "text/html; charset=utf-8" })
          .end(
            `<!doctype html><html lang="en"><head><title>Help</title></head><body><p id="tip"></p><script>document.getElementById("tip").textContent = "tip";</script></body></html>`,
          );
      response.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    notes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const ANN_PASSWORD = "ann-pw-1";

const DOCUMENT = {
  openapi: "3.0.3",
  info: { title: "notes", version: "1" },
  paths: {
    "/notes": {
      get: { responses: { "200": { description: "the notes" } } },
      post: {
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: { type: "object", required: ["text"], properties: { text: { type: "string" } } },
            },
          },
        },
        responses: { "201": { description: "saved" } },
      },
    },
  },
};

const board: Page = { path: "/board", status: 200, links: [], forms: [], roles: ["anonymous"] };

let lastArtifacts = "";

async function probe(
  app: NotesApp,
  pages: Page[] = [board],
  signIn: Record<string, unknown> = {},
  browser?: BrowserSession,
): Promise<{ candidates: EnvelopeDraft[]; stats: Record<string, unknown>; launched: boolean }> {
  const profile = profileFor({
    name: "notes",
    source: {},
    environment: { mode: "managed", base_url: app.baseUrl },
    ...signIn,
  });
  const map = systemMapFor({ target: "notes", baseUrl: app.baseUrl, document: DOCUMENT, pages });
  const context = probeContext({ profile, map, agent: "AUDITOR" });
  lastArtifacts = context.artifactsDir;
  if (browser) context.shared.set("browser:session", browser);
  try {
    const result = await callTool(probeXssTool, {}, context);
    if (!result.ok) throw new Error(result.error);
    const data = result.data as { candidates: EnvelopeDraft[]; stats: Record<string, unknown> };
    for (const candidate of data.candidates) EnvelopeDraftSchema.parse(candidate);
    return { ...data, launched: context.shared.has("browser:session") };
  } finally {
    await closeRunServices(context);
    await browser?.close();
  }
}

/** The run's browser, whose role contexts fail to open (a sign-in timing out) the first `failures` times. */
class FailingContexts extends BrowserSession {
  constructor(private failures: number) {
    super();
  }

  override context(...args: Parameters<BrowserSession["context"]>) {
    if (this.failures <= 0) return super.context(...args);
    this.failures -= 1;
    return Promise.reject(new Error("signing in timed out"));
  }
}

/** A GraphQL app: `createPaste(content)` stores, `pastes` lists, and /gallery's script inserts each as HTML. */
async function startGraphqlApp(): Promise<NotesApp> {
  const notes: string[] = [];
  const script = `fetch("/graphql", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: "query Pastes { pastes { id content } }" }) })
    .then((answer) => answer.json())
    .then(({ data }) => { for (const paste of data.pastes) document.getElementById("gallery").insertAdjacentHTML("beforeend", \`<pre>\${paste.content}</pre>\`); });`;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const json = (value: unknown) =>
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
      const url = new URL(request.url ?? "/", "http://x");
      if (url.pathname === "/gallery")
        return response
          .writeHead(200, { "content-type": "text/html" })
          .end(
            `<!doctype html><html lang="en"><head><title>Gallery</title></head><body><div id="gallery"></div><script>${script}</script></body></html>`,
          );
      if (url.pathname !== "/graphql" || request.method !== "POST") return response.writeHead(404).end();
      let body: { query?: string; variables?: { content?: unknown } } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
      } catch {
        return json({ errors: [{ message: "bad JSON" }] });
      }
      if (body.query?.includes("createPaste")) {
        const content = body.variables?.content;
        if (typeof content !== "string") return json({ errors: [{ message: "content is required" }] });
        notes.push(content);
        return json({ data: { createPaste: { id: notes.length, content } } });
      }
      if (body.query?.includes("pastes"))
        return json({ data: { pastes: notes.map((content, index) => ({ id: index + 1, content })) } });
      return json({ errors: [{ message: "unknown field" }] });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    notes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function graphqlOperation(kind: "query" | "mutation", field: string, args: string[]): Operation {
  return {
    method: "POST",
    path: "/graphql",
    security: "unknown",
    parameters: [],
    responses: {},
    seen_in: ["graphql"],
    documented: false,
    graphql: {
      kind,
      field,
      arguments: args.map((name) => ({ name, type: "String!", required: true })),
      returns: "Paste",
      selection: "{ id content }",
    },
    request_body: {
      content_type: "application/json",
      required: args.length > 0,
      schema: {
        type: "object",
        required: args,
        properties: Object.fromEntries(args.map((name) => [name, { type: "string" }])),
      },
    },
  };
}

const apps: Partial<Record<Mode, NotesApp>> = {};

let signedInApp: NotesApp;

beforeAll(async () => {
  process.env.QAAS_TEST_XSSR_ANN = ANN_PASSWORD;
  for (const mode of ["markup", "text", "server"] as const) apps[mode] = await startApp(mode);
  signedInApp = await startApp("markup", true);
});

afterAll(async () => {
  await Promise.all([...Object.values(apps), signedInApp].map((app) => app?.close()));
});

const execute = promisify(execFile);

/** Runs a generated test file where it can import playwright-core (this checkout's node_modules). */
async function runGenerated(testFile: string, baseUrl: string): Promise<unknown> {
  const folder = await mkdtemp(path.join(os.tmpdir(), "qaas-xss-rendered-"));
  try {
    await symlink(path.resolve("node_modules"), path.join(folder, "node_modules"));
    const copy = path.join(folder, "repro.test.mjs");
    await copyFile(testFile, copy);
    return await execute(process.execPath, ["--test", copy], {
      env: { ...process.env, QAAS_BASE_URL: baseUrl },
      timeout: 60_000,
    });
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

describe("probe_xss: stored values a page's own script inserts", () => {
  it("finds a note the page's script inserts with innerHTML, with the request that delivered it", async () => {
    const { candidates, stats } = await probe(apps.markup!);
    const rendered = candidates.filter((candidate) => candidate.title.includes("inserted as markup"));
    expect(rendered).toHaveLength(1);
    const finding = rendered[0]!;
    expect(finding.title).toBe(
      "Stored XSS: body text saved through POST /notes is inserted as markup by the script of /board",
    );
    expect(finding).toMatchObject({
      domain: "security",
      defect_class: "xss",
      severity: "high",
      location: {
        kind: "endpoint",
        value: "POST /notes",
        related: [
          { kind: "page", value: "/board" },
          { kind: "endpoint", value: "GET /notes" },
        ],
      },
      dedupe: { discriminator: "body:text" },
    });
    const descriptions = finding.evidence.map((item) => item.description);
    expect(descriptions.some((text) => text.startsWith("injected: POST"))).toBe(true);
    expect(descriptions.some((text) => text.startsWith("delivered: GET") && text.includes("/notes"))).toBe(
      true,
    );
    expect(descriptions).toContainEqual(
      expect.stringContaining("delivered by GET /notes and inserted as markup into /board"),
    );
    expect(descriptions).toContainEqual(
      expect.stringMatching(/getElementsByTagName\("qaas-xss-[0-9a-f]{8}"\)/),
    );
    expect(stats).toMatchObject({ browser_confirmed: 1, browser_confirm_loads: 1 });
    expect(stats.browser_pages_loaded).toBeGreaterThanOrEqual(1);
    expect(stats.browser_pages_loaded).toBeLessThanOrEqual(15);

    // The generated test saves its own note over HTTP and looks for the element in Chromium: it fails on
    // the build that inserts markup and passes on the one that sets text.
    const testUri = finding.evidence.find((item) => item.kind === "failing_test")!.uri!;
    const testFile = path.join(lastArtifacts, testUri.replace(/^artifact:\/\/[^/]+\//, ""));
    await expect(runGenerated(testFile, apps.markup!.baseUrl)).rejects.toMatchObject({
      stdout: expect.stringContaining("a stored value must be inserted into the page as text, not markup"),
    });
    await expect(runGenerated(testFile, apps.text!.baseUrl)).resolves.toBeDefined();
  }, 120_000);

  it("opens a reader's browser context again when it failed once, and counts and notes pages nobody read", async () => {
    const retried = await probe(apps.markup!, [board], {}, new FailingContexts(1));
    expect(retried.candidates.map((candidate) => candidate.title)).toEqual([
      "Stored XSS: body text saved through POST /notes is inserted as markup by the script of /board",
    ]);
    expect(retried.stats.browser_contexts_failed).toBe(0);
    const unread = await probe(apps.markup!, [board], {}, new FailingContexts(Number.POSITIVE_INFINITY));
    expect(unread.candidates).toEqual([]);
    expect(unread.stats).toMatchObject({ browser_pages_loaded: 0, browser_contexts_failed: 1 });
    expect(unread.stats.notes).toContainEqual(
      "probe_xss: 1 page look(s) had no browser context, so their pages went unread (anonymous: signing in timed out)",
    );
  }, 120_000);

  it("leaves the page that sets the note as text alone, though it loaded it in the browser", async () => {
    const { candidates, stats } = await probe(apps.text!);
    expect(candidates).toEqual([]);
    expect(apps.text!.notes.some((note) => note.includes("<qaas-xss-"))).toBe(true);
    expect(stats.browser_pages_loaded).toBeGreaterThanOrEqual(1);
    expect(stats.browser_confirmed).toBe(0);
  }, 120_000);

  it("leaves a server-rendered page that escapes the note alone", async () => {
    const { candidates, stats } = await probe(apps.server!);
    expect(candidates).toEqual([]);
    expect(apps.server!.notes.some((note) => note.includes("<qaas-xss-"))).toBe(true);
    expect(stats.browser_confirmed).toBe(0);
  }, 120_000);

  it("launches no browser when no page could insert the note (the map has no page)", async () => {
    const { candidates, stats, launched } = await probe(apps.markup!, []);
    expect(candidates).toEqual([]);
    expect(stats.stored_planted).toBe(1);
    expect(stats.browser_skipped).toBe("no HTML page with a script of its own");
    expect(launched).toBe(false);
  }, 120_000);

  it("notes a missing Chromium and still answers", async () => {
    const before = process.env.QAAS_CHROMIUM;
    process.env.QAAS_CHROMIUM = "/nonexistent/chromium";
    try {
      const { candidates, stats } = await probe(apps.markup!);
      expect(candidates).toEqual([]);
      expect(stats.browser_skipped).toMatch(/^no browser: QAAS_CHROMIUM is \/nonexistent\/chromium/);
      expect(stats.notes).toContainEqual(expect.stringContaining("were not looked for in a browser"));
    } finally {
      if (before === undefined) delete process.env.QAAS_CHROMIUM;
      else process.env.QAAS_CHROMIUM = before;
    }
  }, 120_000);

  it("finds a GraphQL mutation's value a page's script fetches by a GraphQL query and inserts as HTML", async () => {
    const app = await startGraphqlApp();
    try {
      const profile = profileFor({
        name: "pastes",
        source: {},
        environment: { mode: "managed", base_url: app.baseUrl },
      });
      const map = systemMapFor({
        target: "pastes",
        baseUrl: app.baseUrl,
        document: { openapi: "3.0.3", info: { title: "none", version: "0" }, paths: {} },
        extraOperations: [
          graphqlOperation("mutation", "createPaste", ["content"]),
          graphqlOperation("query", "pastes", []),
        ],
        pages: [{ path: "/gallery", status: 200, links: [], forms: [], roles: ["anonymous"] }],
      });
      map.openapi = null;
      const context = probeContext({ profile, map, agent: "AUDITOR" });
      let candidates: EnvelopeDraft[];
      try {
        const result = await callTool(probeXssTool, {}, context);
        if (!result.ok) throw new Error(result.error);
        candidates = (result.data as { candidates: EnvelopeDraft[] }).candidates;
      } finally {
        await closeRunServices(context);
      }
      expect(app.notes.some((note) => note.includes("<qaas-xss-"))).toBe(true);
      expect(candidates.map((candidate) => candidate.title)).toEqual([
        "Stored XSS: argument content of mutation createPaste saved through POST /graphql is inserted as markup by the script of /gallery",
      ]);
      expect(candidates[0]).toMatchObject({
        location: {
          kind: "endpoint",
          value: "POST /graphql",
          related: [{ kind: "page", value: "/gallery" }],
        },
        dedupe: { discriminator: "body:content@createPaste" },
      });
      expect(candidates[0]!.evidence.map((item) => item.description)).toContainEqual(
        "Stored through POST /graphql argument content of mutation createPaste, delivered by POST /graphql query Pastes and inserted as markup into /gallery.",
      );
    } finally {
      await app.close();
    }
  }, 120_000);

  it("reads the page as a signed-in user in the browser, and the generated test signs in the same way", async () => {
    const signIn = {
      auth: {
        login: { kind: "json", endpoint: "POST /login", token_from: "cookie:sid", apply_as: "cookie:sid" },
      },
      users: [{ name: "ann", role: "member", username: "ann", password: "secret_ref:QAAS_TEST_XSSR_ANN" }],
    };
    const { candidates } = await probe(signedInApp, [{ ...board, roles: ["member"] }], signIn);
    expect(candidates.map((candidate) => candidate.title)).toEqual([
      "Stored XSS: body text saved through POST /notes is inserted as markup by the script of /board",
    ]);
    expect(candidates[0]!.evidence.map((item) => item.description)).toContainEqual(
      expect.stringMatching(/^DOM check in Chromium as ann: /),
    );
    const testUri = candidates[0]!.evidence.find((item) => item.kind === "failing_test")!.uri!;
    const testFile = path.join(lastArtifacts, testUri.replace(/^artifact:\/\/[^/]+\//, ""));
    await expect(runGenerated(testFile, signedInApp.baseUrl)).rejects.toMatchObject({
      stdout: expect.stringContaining("a stored value must be inserted into the page as text, not markup"),
    });
  }, 120_000);
});

describe("the pages the browser looks at, under its load cap", () => {
  const help = (count: number): Page[] =>
    Array.from({ length: count }, (_, index) => ({ ...board, path: `/help/${index + 1}` }));

  it("looks at several pages at once and finds the note on a page after pages that show none", async () => {
    const { candidates, stats } = await probe(apps.markup!, [...help(5), board]);
    expect(candidates.map((candidate) => candidate.title)).toEqual([
      "Stored XSS: body text saved through POST /notes is inserted as markup by the script of /board",
    ]);
    expect(stats).toMatchObject({ browser_pages: 6, browser_pages_loaded: 6, browser_confirmed: 1 });
  }, 120_000);

  it("looks at no page past the load cap, whichever loads end first", async () => {
    const { candidates, stats } = await probe(apps.markup!, [...help(16), board]);
    expect(candidates.filter((candidate) => candidate.title.includes("inserted as markup"))).toEqual([]);
    expect(stats).toMatchObject({ browser_pages: 17, browser_pages_loaded: 15, browser_confirm_loads: 0 });
  }, 120_000);

  it("opens every page by one reader before any page by a second, records just saved first", () => {
    const page = (path: string, viewer: string | undefined, created = false) => ({ path, viewer, created });
    const pages = [
      page("/", undefined),
      page("/", "ada"),
      page("/", "root"),
      page("/board", "ada"),
      page("/board", undefined),
      page("/notes/7", "ada", true),
      page("/board", "ada"),
      page("/about", "root"),
    ];
    expect(ordered(pages).map((entry) => `${entry.path} ${entry.viewer ?? "-"}`)).toEqual([
      "/notes/7 ada",
      "/ -",
      "/board ada",
      "/about root",
      "/ ada",
      "/board -",
      "/ root",
    ]);
  });
});
