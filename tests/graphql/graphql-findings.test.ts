import type { IntrospectionSchema } from "graphql";
import { afterEach, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { EnvelopeDraftSchema } from "../../src/envelope/envelope-draft.ts";
import { composeInventory } from "../../src/map/inventory.ts";
import type { SystemMap } from "../../src/map/system-map.ts";
import { checkGraphql, type GraphqlCheckOptions } from "../../src/probes/graphql/check-graphql.ts";
import { circularPaths, circularQuery, confirmDepth } from "../../src/probes/graphql/depth-check.ts";
import { operationsFromSchema } from "../../src/probes/graphql/schema-operations.ts";
import { schemaFromSdl } from "../../src/probes/graphql/sdl-schema.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { probeContext, profileFor } from "../fixtures/probe-harness.ts";
import type { FakeRunContext } from "../support/fake-run-context.ts";
import { generatedTests } from "./generated-tests.ts";
import {
  FIXTURE_SDL,
  type GraphqlServer,
  type GraphqlServerOptions,
  startGraphqlServer,
} from "./graphql-server.ts";

const servers: GraphqlServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const schema = (): IntrospectionSchema => schemaFromSdl([{ origin: "fixture", text: FIXTURE_SDL }])!.schema;

/** A started fixture and an AUDITOR context whose map holds its GraphQL endpoint and operations. */
async function fixture(
  options: GraphqlServerOptions,
  mode: "managed" | "external" = "managed",
): Promise<{ server: GraphqlServer; context: FakeRunContext }> {
  const server = await startGraphqlServer(options);
  servers.push(server);
  const map: SystemMap = {
    map_version: 1,
    target: "fixture-graphql",
    created_at: new Date().toISOString(),
    commit: null,
    base_url: server.baseUrl,
    openapi: null,
    operations: composeInventory([], operationsFromSchema(schema(), "/graphql")),
    routes: [],
    pages: [],
    channels: [],
    graphql: [{ path: "/graphql", source: "sdl", schema: schema() as unknown as Record<string, unknown> }],
    database: null,
    ownership: [],
    notes: [],
  };
  const profile = profileFor({
    name: "fixture-graphql",
    source: {},
    environment: { mode, base_url: server.baseUrl },
  });
  return { server, context: probeContext({ profile, map, agent: "AUDITOR" }) };
}

async function check(context: FakeRunContext, options: GraphqlCheckOptions = {}) {
  const run = openProbeRun(context, "check_graphql");
  if (typeof run === "string") throw new Error(run);
  const outcome = await checkGraphql(run, options);
  for (const candidate of outcome.candidates) EnvelopeDraftSchema.parse(candidate);
  return { ...outcome, requests: run.client.stats.sent };
}

const kinds = (candidates: EnvelopeDraft[]) =>
  candidates.map((candidate) => `${candidate.dedupe?.discriminator} ${candidate.location.value}`);

const GRAPHIQL_PAGE = `<!DOCTYPE html><html><head><title>GraphiQL</title>
<link href="https://unpkg.com/graphiql@3.0.0/graphiql.min.css" rel="stylesheet" /></head>
<body><div id="graphiql">Loading…</div><script src="https://unpkg.com/graphiql@3.0.0/graphiql.min.js"></script>
<script>ReactDOM.render(React.createElement(GraphiQL, { fetcher: GraphiQL.createFetcher({ url: "/graphql" }) }),
document.getElementById("graphiql"));</script></body></html>`;
/** A page that only talks about the IDE: the look-alike a careless signature would flag. */
const IDE_DISABLED_PAGE =
  "<!DOCTYPE html><html><body><h1>API</h1><p>The GraphiQL explorer and GraphQL Playground are disabled in production.</p></body></html>";

const VULNERABLE: GraphqlServerOptions = {
  batching: true,
  debugErrors: true,
  files: { "/graphiql": ["text/html; charset=utf-8", GRAPHIQL_PAGE] },
};
const HARDENED: GraphqlServerOptions = {
  introspection: "refused",
  suggestions: false,
  batching: false,
  maxDepth: 6,
  maxAliases: 20,
  maxFields: 100,
  files: { "/graphiql": ["text/html; charset=utf-8", IDE_DISABLED_PAGE] },
};
const ALL_CHECKS = ["introspection", "suggestions", "batching", "depth", "aliases", "duplication", "errors"];

describe("GraphQL checks", () => {
  it("finds open introspection, suggestions, batching, depth, aliases, duplication, stack traces and an IDE, each with a test that fails", async () => {
    const { server, context } = await fixture(VULNERABLE);
    const { candidates, requests } = await check(context);
    expect(kinds(candidates)).toEqual([
      "graphql-introspection POST /graphql",
      "graphql-field-suggestions POST /graphql",
      "graphql-batching POST /graphql",
      "graphql-depth POST /graphql",
      "graphql-alias-overloading POST /graphql",
      "graphql-field-duplication POST /graphql",
      "graphql-stack-trace POST /graphql",
      "graphql-ide GET /graphiql",
    ]);
    for (const candidate of candidates) {
      expect(candidate).toMatchObject({
        domain: "security",
        defect_class:
          candidate.dedupe?.discriminator === "graphql-stack-trace"
            ? "sensitive-data-exposure"
            : "misconfiguration",
        severity: "low",
      });
      expect(candidate.evidence.filter((item) => item.kind === "exchange")).toHaveLength(2);
    }
    expect(candidates[1]?.summary).toMatch(/pastess[\s\S]*pastes/);
    expect(candidates[3]?.title).toMatch(/10 levels deep/);
    expect(candidates[6]?.summary).toMatch(/graphql-server\.ts:\d+:\d+/);
    expect(candidates[7]?.summary).toMatch(/GraphiQL/);
    // Small and bounded: a handful of requests plus the IDE paths, no batch beyond 10, nothing written.
    expect(requests).toBeLessThanOrEqual(45);
    const batchSizes = server.requests
      .filter((request) => request.body.startsWith("["))
      .map((request) => JSON.parse(request.body).length);
    expect(batchSizes).toEqual([3, 10]);
    expect(server.pastes).toHaveLength(2);

    const hardened = await startGraphqlServer(HARDENED);
    servers.push(hardened);
    const titles = candidates.map((candidate) => {
      const test = candidate.evidence.find((item) => item.kind === "failing_test");
      return test?.test?.name ?? "";
    });
    const [againstVulnerable, againstHardened] = await Promise.all([
      generatedTests(context, candidates, server.baseUrl),
      generatedTests(context, candidates, hardened.baseUrl),
    ]);
    expect(againstVulnerable).toEqual(Object.fromEntries(titles.map((title) => [title, false])));
    expect(againstHardened).toEqual(Object.fromEntries(titles.map((title) => [title, true])));
  }, 200_000);

  it("reports nothing against a hardened server that serves the same schema", async () => {
    const { context } = await fixture(HARDENED);
    const { candidates, stats } = await check(context);
    expect(candidates).toEqual([]);
    expect(stats.checked).toEqual({
      "/graphql": ALL_CHECKS,
      "(token arguments)": ["tokens"],
      "(ide pages)": ["ide"],
    });
  });

  it("does not report introspection or suggestions for an API the profile calls public", async () => {
    const { context } = await fixture(VULNERABLE);
    const { candidates } = await check(context, { api_public: true });
    expect(kinds(candidates)).toEqual([
      "graphql-batching POST /graphql",
      "graphql-depth POST /graphql",
      "graphql-alias-overloading POST /graphql",
      "graphql-field-duplication POST /graphql",
      "graphql-stack-trace POST /graphql",
    ]);
  });

  it("leaves a capped batch and a depth limit above the first query alone", async () => {
    const { context } = await fixture({ batching: true, batchLimit: 5, maxDepth: 8 });
    const { candidates } = await check(context, { checks: ["batching", "depth"] });
    expect(candidates).toEqual([]);
  });

  it("proves a missing depth limit on a root id that matches nothing when the lists are too crowded to go deep", async () => {
    const crowded = await fixture({ crowdedLists: 40 });
    const { candidates } = await check(crowded.context, { checks: ["depth"] });
    expect(kinds(candidates)).toEqual(["graphql-depth POST /graphql"]);
    expect(candidates[0]!.summary).toMatch(/paste\(id: "2147480001"\), an id that matches nothing/);
    // Nothing deep was ever loaded: no request asked the crowded lists past the first, shallow query.
    const documents = crowded.server.requests.map(
      (request) => `${decodeURIComponent(request.url.replace(/\+/g, " "))} ${request.body}`,
    );
    const deep = documents.filter((text) => (text.match(/owner \{/g) ?? []).length > 2);
    expect(deep.length).toBeGreaterThan(0);
    expect(deep.every((text) => text.includes("2147480001"))).toBe(true);
    // The same crowding under a depth limit of 8: the 10-level query is refused, nothing to report.
    const limited = await fixture({ crowdedLists: 40, maxDepth: 8 });
    expect((await check(limited.context, { checks: ["depth"] })).candidates).toEqual([]);
  });

  it("only reads an external target: GET for introspection, no batch at all", async () => {
    const { server, context } = await fixture(VULNERABLE, "external");
    const { candidates, stats } = await check(context);
    expect(kinds(candidates)).toEqual([
      "graphql-introspection POST /graphql",
      "graphql-field-suggestions POST /graphql",
      "graphql-depth POST /graphql",
      "graphql-alias-overloading POST /graphql",
      "graphql-field-duplication POST /graphql",
      "graphql-stack-trace POST /graphql",
      "graphql-ide GET /graphiql",
    ]);
    expect(server.requests.every((request) => request.method === "GET")).toBe(true);
    expect(JSON.stringify(stats)).toMatch(/batching not tried/);
  });
});

describe("circular queries", () => {
  it("walks the shortest cycle from a root field, asking lists for one item where a limit exists", () => {
    const [first] = circularPaths(schema());
    expect(first?.root.name).toBe("pastes");
    expect(circularQuery(first!, 4)).toBe(
      "query QaasDepth { pastes(limit: 1) { owner { pastes(limit: 1) { owner { __typename } } } } }",
    );
  });

  it("goes deeper only while the projected answer stays small", () => {
    // Empty deep levels: validated at that depth, nothing loaded, so the deepest confirmation is free.
    expect(confirmDepth([1, 0, 0, 0])).toBe(10);
    expect(confirmDepth([1, 1, 1, 1])).toBe(10);
    // Growing fivefold per level: 5^5 objects would follow at depth 6, far past the cap.
    expect(confirmDepth([1, 5, 25, 125])).toBeUndefined();
  });
});
