import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import mapperPlaybook from "../../src/agents/playbooks/mapper.ts";
import { SystemMapSchema } from "../../src/map/system-map.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { LoadedTarget } from "../../src/tools/context.ts";
import { MAP_DRAFT_KEY, type MapDraft } from "../../src/tools/servers/map-draft.ts";
import { mapTools } from "../../src/tools/servers/map-server.ts";
import { callTool, fakeRunContext, runPlaybookDirectly } from "../support/fake-run-context.ts";
import { createFixtureDatabase } from "./fixture-database.ts";
import { writeTree } from "./write-tree.ts";

const openapi = `
openapi: 3.0.3
info: { title: Items, version: "1" }
security: [{ bearer: [] }]
paths:
  /api/items:
    get: { security: [], responses: { "200": { description: ok } } }
    post: { responses: { "201": { description: created } } }
  /api/items/{id}:
    get:
      parameters: [{ name: id, in: path, required: true, schema: { type: integer } }]
      responses: { "200": { description: ok } }
components:
  securitySchemes: { bearer: { type: http, scheme: bearer } }
`;

const server = `
const express = require("express");
const { WebSocketServer } = require("ws");
const app = express();
app.get("/api/items", (req, res) => res.json([]));
app.post("/api/items", (req, res) => res.status(201).json({}));
app.get("/api/items/:itemId", (req, res) => res.json({}));
app.delete("/api/items/:itemId", (req, res) => res.status(204).end());
app.get("/health", (req, res) => res.send("ok"));
const sockets = new WebSocketServer({ path: "/live" });
`;

let site: http.Server;
let baseUrl: string;

beforeAll(async () => {
  site = http.createServer((request, response) => {
    const pages: Record<string, string> = {
      "/": `<title>Shop</title><a href="/cart">Cart</a><form method="post" action="/cart"><input name="sku"></form>`,
      "/cart": `<title>Cart</title><a href="/">Home</a>`,
    };
    const body = pages[request.url ?? "/"];
    response.writeHead(body ? 200 : 404, { "content-type": "text/html" }).end(body ?? "missing");
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())));

function fixtureTarget(): LoadedTarget {
  const root = writeTree({
    "package.json": JSON.stringify({ dependencies: { express: "4", ws: "8" } }),
    "docs/openapi.yaml": openapi,
    "src/server.js": server,
    // The answer key is a file of the tree like any other; no probe may read it.
    "qa/answers.js": `const app = require("express")(); app.get("/from-the-answer-key", (req, res) => {});`,
    CODEOWNERS: "* @team/shop\n",
  });
  createFixtureDatabase(path.join(root, "library.db"));
  const profile = TargetProfileSchema.parse({
    name: "fixture-shop",
    source: { path: "." },
    environment: { mode: "external", base_url: baseUrl },
    api: { openapi: "docs/openapi.yaml" },
    ui: { entry: "/" },
    websocket: { paths: ["/live", "/notifications"] },
    database: { kind: "sqlite", path: "library.db" },
    golden_ledger: "qa/answers.js",
  });
  return {
    profile,
    file: path.join(root, "qaas-profile.yaml"),
    root,
    goldenLedger: path.join(root, "qa/answers.js"),
  };
}

describe("MAPPER playbook with the map tools", () => {
  it("maps a target end to end into a valid system map, marking undocumented source routes", async () => {
    const context = fakeRunContext({ target: fixtureTarget() });
    const calls = await runPlaybookDirectly(mapperPlaybook, mapTools, context);
    expect(calls.map((call) => call.tool)).toEqual([
      "map_openapi",
      "map_source_routes",
      "map_pages",
      "map_frontend",
      "map_traffic",
      "map_graphql",
      "map_database",
      "map_ownership",
      "save_system_map",
    ]);
    expect(calls.every((call) => call.result.ok)).toBe(true);
    expect(calls.at(-1)?.result).toMatchObject({
      ok: true,
      data: {
        version: 1,
        counts: { operations: 8, documented: 3, undocumented: 5, pages: 2, tables: 3, owners: 1 },
      },
    });

    const map = SystemMapSchema.parse(context.systemMap());
    expect(map.target).toBe("fixture-shop");
    expect(map.base_url).toBe(baseUrl);
    const operations = map.operations.map((operation) => ({
      signature: `${operation.method} ${operation.path}`,
      security: operation.security,
      seen_in: operation.seen_in,
      documented: operation.documented,
    }));
    expect(operations).toEqual([
      { signature: "GET /api/items", security: "public", seen_in: ["openapi", "source"], documented: true },
      {
        signature: "POST /api/items",
        security: "required",
        seen_in: ["openapi", "source"],
        documented: true,
      },
      {
        signature: "GET /api/items/{id}",
        security: "required",
        seen_in: ["openapi", "source"],
        documented: true,
      },
      {
        signature: "DELETE /api/items/{itemId}",
        security: "unknown",
        seen_in: ["source"],
        documented: false,
      },
      { signature: "GET /health", security: "unknown", seen_in: ["source"], documented: false },
      // What the crawl served joins the inventory: links as reads, forms as the writes they submit.
      { signature: "GET /", security: "unknown", seen_in: ["link"], documented: false },
      { signature: "GET /cart", security: "unknown", seen_in: ["link"], documented: false },
      { signature: "POST /cart", security: "unknown", seen_in: ["form"], documented: false },
    ]);
    expect(map.operations[3]?.parameters).toEqual([{ name: "itemId", in: "path", required: true }]);
    expect(map.routes.some((route) => route.path === "/from-the-answer-key")).toBe(false);
    expect(map.pages.map((page) => page.path)).toEqual(["/", "/cart"]);
    expect(map.channels).toEqual([
      { path: "/live", seen_in: ["source", "profile"] },
      { path: "/notifications", seen_in: ["profile"] },
    ]);
    expect(map.database?.kind).toBe("sqlite");
    expect(map.database?.tables.map((table) => table.name)).toEqual(["authors", "books", "loans"]);
    expect(map.ownership).toEqual([{ path: ".", owner: "@team/shop", source: "codeowners" }]);
    expect(map.openapi).toMatchObject({ source: "docs/openapi.yaml", version: "3.0.3", title: "Items" });
    expect(() => JSON.stringify(map)).not.toThrow();
  });

  it("maps a static target with nothing but source, noting every missing part", async () => {
    const root = writeTree({
      "app.py":
        "from flask import Flask\napp = Flask(__name__)\n@app.get('/ping')\ndef ping():\n    return 'pong'\n",
    });
    const profile = TargetProfileSchema.parse({
      name: "static-only",
      source: { path: "." },
      environment: { mode: "none" },
    });
    const context = fakeRunContext({
      target: { profile, file: path.join(root, "p.yaml"), root, goldenLedger: undefined },
    });
    const calls = await runPlaybookDirectly(mapperPlaybook, mapTools, context);
    expect(calls.map((call) => call.result.ok)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    const map = SystemMapSchema.parse(context.systemMap());
    expect(map.openapi).toBeNull();
    expect(map.database).toBeNull();
    expect(map.operations).toMatchObject([
      { method: "GET", path: "/ping", documented: false, seen_in: ["source"] },
    ]);
    expect(map.notes).toEqual([
      "no OpenAPI document: the profile names none (api.openapi) and none was found in the source or at the usual URLs",
      "the target is not live (environment.mode none or no base_url): pages not crawled",
      "the target is not live (environment.mode none or no base_url): frontend scripts not read",
      "the target is not live (environment.mode none or no base_url): traffic not recorded",
      "no GraphQL endpoint found (source, frontend, usual paths)",
      "GraphQL not tried live: the target profile's environment.mode is none: there is no live target to probe",
      "no database: the profile has no database section and the source shows none",
      "no CODEOWNERS file and not a git repository: no owners",
    ]);
  });

  it("keeps going when a part fails, and save_system_map answers field errors for an invalid draft", async () => {
    const target = fixtureTarget();
    target.profile.api = { openapi: "docs/missing.yaml", exclude: [], public: false, discover: true };
    const context = fakeRunContext({ target });
    const calls = await runPlaybookDirectly(mapperPlaybook, mapTools, context);
    expect(calls[0]?.result).toMatchObject({ ok: false });
    expect(calls.at(-1)?.result.ok).toBe(true);
    expect(
      context
        .systemMap()
        ?.notes.some((note) => note.startsWith("OpenAPI document docs/missing.yaml not read")),
    ).toBe(true);

    const draft = context.shared.get(MAP_DRAFT_KEY) as MapDraft;
    draft.routes.push({ method: "GET", path: "/broken", file: "x.js", line: 1.5, framework: "express" });
    const save = mapTools.find((tool) => tool.name === "save_system_map");
    const result = await callTool(save!, {}, context);
    expect(result).toMatchObject({ ok: false });
    expect(!result.ok && result.error).toMatch(/routes\.\d+\.line/);
  });

  it("finds a document the profile does not name, unless the profile says not to look", async () => {
    const target = fixtureTarget();
    target.profile.api = { exclude: [], public: false, discover: true };
    const found = fakeRunContext({ target });
    await runPlaybookDirectly(mapperPlaybook, mapTools, found);
    expect(found.systemMap()?.openapi).toMatchObject({ source: "docs/openapi.yaml", title: "Items" });
    expect(found.systemMap()?.operations.filter((operation) => operation.documented)).toHaveLength(3);

    target.profile.api = { exclude: [], public: false, discover: false };
    const withheld = fakeRunContext({ target });
    await runPlaybookDirectly(mapperPlaybook, mapTools, withheld);
    expect(withheld.systemMap()?.openapi).toBeNull();
    expect(withheld.systemMap()?.operations.some((operation) => operation.documented)).toBe(false);
    expect(withheld.systemMap()?.notes).toContain(
      "no OpenAPI document: the profile names none and says not to look for one (api.discover: false)",
    );
    // Two whole MAPPER runs (a browser crawl each): slow on a busy machine.
  }, 120_000);
});
