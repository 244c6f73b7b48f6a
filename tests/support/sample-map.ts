import type { SystemMap } from "../../src/map/system-map.ts";

/** A small valid system map (one route, nothing else) for tests of where maps are kept. */
export function sampleSystemMap(overrides: Partial<SystemMap> = {}): SystemMap {
  return {
    map_version: 1,
    target: "shop",
    created_at: "2026-11-29T20:00:00.000Z",
    commit: "abc123",
    base_url: "http://127.0.0.1:3000",
    openapi: null,
    operations: [],
    routes: [{ method: "GET", path: "/api/items", file: "src/routes.ts", framework: "fastify" }],
    pages: [],
    channels: [],
    graphql: [],
    database: null,
    ownership: [],
    notes: [],
    ...overrides,
  };
}
