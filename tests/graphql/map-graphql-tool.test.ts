import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SystemMapSchema } from "../../src/map/system-map.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { LoadedTarget } from "../../src/tools/context.ts";
import { mapDraft } from "../../src/tools/servers/map-draft.ts";
import { mapGraphqlTools } from "../../src/tools/servers/map-graphql-tools.ts";
import { mapTools } from "../../src/tools/servers/map-server.ts";
import { writeTree } from "../map/write-tree.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import {
  FIXTURE_SDL,
  type GraphqlServer,
  type GraphqlServerOptions,
  startGraphqlServer,
} from "./graphql-server.ts";

const TOKEN_VARIABLE = "QAAS_TEST_GRAPHQL_TOKEN";
const tool = (name: string) =>
  [...mapGraphqlTools, ...mapTools].find((candidate) => candidate.name === name)!;

const servers: GraphqlServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
beforeAll(() => {
  process.env[TOKEN_VARIABLE] = "t0ken";
});
afterAll(() => {
  delete process.env[TOKEN_VARIABLE];
});

async function serve(options: GraphqlServerOptions): Promise<GraphqlServer> {
  const server = await startGraphqlServer(options);
  servers.push(server);
  return server;
}

function target(
  baseUrl: string,
  options: { mode: "managed" | "external" | "none"; files?: Record<string, string>; withUser?: boolean },
): LoadedTarget {
  const root = options.files ? writeTree(options.files, "qaas-graphql-") : undefined;
  const profile = TargetProfileSchema.parse({
    name: "fixture-graphql",
    source: { path: "." },
    environment: { mode: options.mode, base_url: baseUrl },
    ...(options.withUser
      ? {
          auth: { login: { kind: "bearer" } },
          users: [{ name: "reader", role: "user", token: `secret_ref:${TOKEN_VARIABLE}` }],
        }
      : {}),
  });
  return { profile, file: path.join(root ?? "/tmp", "profile.yaml"), root, goldenLedger: undefined };
}

describe("map_graphql", () => {
  it("maps a live endpoint the source names, by introspection, into a valid system map beside the routes", async () => {
    const server = await serve({ path: "/api/gql" });
    const context = fakeRunContext({
      target: target(server.baseUrl, {
        mode: "managed",
        files: {
          "package.json": JSON.stringify({ dependencies: { express: "4", "express-graphql": "0.12" } }),
          "src/server.js": `const express = require("express");\nconst { graphqlHTTP } = require("express-graphql");\nconst app = express();\napp.get("/health", (req, res) => res.send("ok"));\napp.use("/api/gql", graphqlHTTP({ schema }));\n`,
        },
      }),
    });
    const routes = await callTool(tool("map_source_routes"), {}, context);
    expect(routes.ok).toBe(true);
    const result = await callTool(tool("map_graphql"), {}, context);
    expect(result).toMatchObject({
      ok: true,
      data: {
        operations: 11,
        by_kind: { query: 7, mutation: 3, subscription: 1 },
        endpoints: [
          { path: "/api/gql", found_by: "source", schema_from: "introspection", introspection: "full" },
        ],
      },
    });
    // Only the named path was tried: the usual ones are not needed once it answered.
    expect(new Set(server.requests.map((request) => new URL(request.url, server.baseUrl).pathname))).toEqual(
      new Set(["/api/gql"]),
    );
    const saved = await callTool(tool("save_system_map"), {}, context);
    expect(saved.ok).toBe(true);
    const map = SystemMapSchema.parse(context.systemMap());
    expect(map.graphql).toHaveLength(1);
    expect(map.graphql[0]).toMatchObject({ path: "/api/gql", source: "introspection" });
    const create = map.operations.find((operation) => operation.graphql?.field === "createPaste")!;
    expect(create).toMatchObject({
      method: "POST",
      path: "/api/gql",
      operation_id: "mutation.createPaste",
      seen_in: ["graphql"],
      handler: { file: "src/server.js", line: 5, framework: "express-graphql" },
      request_body: { content_type: "application/json", required: true },
    });
    expect(map.operations.some((operation) => operation.path === "/health")).toBe(true);
  });

  it("falls back to SDL in the source when the live endpoint refuses introspection", async () => {
    const server = await serve({ path: "/graphql", introspection: "refused" });
    const context = fakeRunContext({
      target: target(server.baseUrl, { mode: "managed", files: { "schema/schema.graphql": FIXTURE_SDL } }),
    });
    const result = await callTool(tool("map_graphql"), {}, context);
    expect(result).toMatchObject({
      ok: true,
      data: { operations: 11, endpoints: [{ path: "/graphql", found_by: "usual", schema_from: "sdl" }] },
    });
    const endpoint = (result as { data: { endpoints: Array<{ introspection: string }> } }).data.endpoints[0];
    expect(endpoint?.introspection).toMatch(/^refused: .*introspection/i);
    expect(mapDraft(context).graphql[0]?.source).toBe("sdl");
  });

  it("only reads (GET) an external target, and signs in where the endpoint refuses anonymous callers", async () => {
    const server = await serve({ path: "/graphql", token: "t0ken" });
    const context = fakeRunContext({ target: target(server.baseUrl, { mode: "external", withUser: true }) });
    const result = await callTool(tool("map_graphql"), {}, context);
    expect(result).toMatchObject({
      ok: true,
      data: { operations: 11, endpoints: [{ path: "/graphql", answered_as: "reader", method: "GET" }] },
    });
    expect(server.requests.every((request) => request.method === "GET")).toBe(true);
    expect(
      mapDraft(context)
        .candidates.get("graphql")
        ?.every((candidate) => candidate.security === "required"),
    ).toBe(true);
  });

  it("maps SDL alone for a static target and says the endpoint path was assumed", async () => {
    const context = fakeRunContext({
      target: target("http://127.0.0.1:9", {
        mode: "none",
        files: { "src/schema.ts": `export const typeDefs = gql\`\n${FIXTURE_SDL}\n\`;` },
      }),
    });
    const result = await callTool(tool("map_graphql"), {}, context);
    expect(result).toMatchObject({
      ok: true,
      data: {
        operations: 11,
        requests: 0,
        endpoints: [{ path: "/graphql", found_by: "assumed", schema_from: "sdl" }],
      },
    });
    expect((result as { data: { notes: string[] } }).data.notes.join("\n")).toMatch(
      /assumed[\s\S]*not tried live/,
    );
  });

  it("finds nothing, says so, and leaves no candidates where nothing is GraphQL", async () => {
    const server = await serve({ path: "/elsewhere-entirely" });
    const context = fakeRunContext({ target: target(server.baseUrl, { mode: "managed" }) });
    const result = await callTool(tool("map_graphql"), {}, context);
    expect(result).toMatchObject({ ok: true, data: { operations: 0, endpoints: [] } });
    expect(mapDraft(context).candidates.get("graphql")).toEqual([]);
    expect(mapDraft(context).notes.get("graphql")?.join("\n")).toMatch(/no GraphQL endpoint found/);
  });
});
