import { afterEach, describe, expect, it } from "vitest";
import { discoverEndpoints } from "../../src/probes/graphql/discover-endpoints.ts";
import { graphqlPathsInMap, graphqlPathsInText } from "../../src/probes/graphql/frontend-endpoints.ts";
import type { GraphqlMethod, GraphqlSend } from "../../src/probes/graphql/graphql-transport.ts";
import { introspect } from "../../src/probes/graphql/introspect.ts";
import { operationsFromSchema } from "../../src/probes/graphql/schema-operations.ts";
import { Semaphore } from "../../src/probes/http/concurrency.ts";
import { HttpClient, RequestBudget } from "../../src/probes/http/http-client.ts";
import { type GraphqlServer, type GraphqlServerOptions, startGraphqlServer } from "./graphql-server.ts";

const servers: GraphqlServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(options: GraphqlServerOptions = {}): Promise<GraphqlServer> {
  const server = await startGraphqlServer(options);
  servers.push(server);
  return server;
}

function sender(headers: Record<string, string> = {}): GraphqlSend {
  const client = new HttpClient({
    limiter: new Semaphore(4),
    budget: new RequestBudget(200),
    writesAllowed: true,
  });
  return (spec) => client.send({ ...spec, headers: { ...spec.headers, ...headers } });
}

const signatures = (schema: Parameters<typeof operationsFromSchema>[0]) =>
  operationsFromSchema(schema, "/graphql").map((candidate) => candidate.graphql);

describe("introspection", () => {
  it("reads the schema with the standard query, by POST", async () => {
    const server = await serve();
    const outcome = await introspect(sender(), `${server.baseUrl}/graphql`);
    expect(outcome).toMatchObject({ how: "full", method: "POST", partial: false });
    expect(signatures(outcome.schema!)).toHaveLength(11);
    expect(server.requests).toHaveLength(1);
  });

  it("falls back to GET for a server that only takes GET, and sends only GET where POST is not allowed", async () => {
    const getOnly = await serve({ getOnly: true });
    const outcome = await introspect(sender(), `${getOnly.baseUrl}/graphql`);
    expect(outcome).toMatchObject({ how: "full", method: "GET" });
    const open = await serve();
    const reads = await introspect(sender(), `${open.baseUrl}/graphql`, ["GET"]);
    expect(reads.how).toBe("full");
    expect(open.requests.map((request) => request.method)).toEqual(["GET"]);
  });

  it("asks again without an operation name where named operations are refused", async () => {
    const server = await serve({ refuseOperationNames: true });
    const outcome = await introspect(sender(), `${server.baseUrl}/graphql`);
    expect(outcome).toMatchObject({ how: "full", method: "POST" });
    expect(signatures(outcome.schema!)).toHaveLength(11);
    expect(outcome.notes.join("\n")).toMatch(/without an operation name/);
    expect(server.requests.map((request) => JSON.parse(request.body).operationName)).toEqual([
      "IntrospectionQuery",
      undefined,
    ]);
  });

  it("rebuilds the schema type by type where only __schema is refused, the same as the full answer", async () => {
    const full = await introspect(sender(), `${(await serve()).baseUrl}/graphql`);
    const blocked = await serve({ introspection: "schema-only" });
    const outcome = await introspect(sender(), `${blocked.baseUrl}/graphql`);
    expect(outcome.how).toBe("by-type");
    expect(outcome.refusal).toMatch(/Introspection is disabled/);
    expect(signatures(outcome.schema!)).toEqual(signatures(full.schema!));
    expect(blocked.requests.length).toBeLessThanOrEqual(8);
  });

  it("gets past depth limits with a lighter query, or type by type", async () => {
    const light = await introspect(sender(), `${(await serve({ maxDepth: 10 })).baseUrl}/graphql`);
    expect(light.how).toBe("light");
    expect(signatures(light.schema!)).toHaveLength(11);
    const byType = await introspect(sender(), `${(await serve({ maxDepth: 9 })).baseUrl}/graphql`);
    expect(byType.how).toBe("by-type");
    expect(signatures(byType.schema!)).toHaveLength(11);
  });

  it("says so when introspection is refused outright, after a bounded number of requests", async () => {
    const server = await serve({ introspection: "refused" });
    const outcome = await introspect(sender(), `${server.baseUrl}/graphql`);
    expect(outcome.how).toBe("refused");
    expect(outcome.schema).toBeUndefined();
    expect(outcome.refusal).toMatch(/introspection has been disabled/i);
    expect(outcome.exchanges[0]?.request.body).toContain("__schema");
    expect(server.requests.length).toBeLessThanOrEqual(8);
  });
});

describe("endpoint discovery", () => {
  const discover = (
    baseUrl: string,
    candidates: Array<{ path: string; origin: "source" | "frontend" }>,
    options: {
      methods?: GraphqlMethod[];
      token?: string;
    } = {},
  ) =>
    discoverEndpoints(candidates, {
      baseUrl,
      sendAs: (user) => sender(user && options.token ? { authorization: `Bearer ${options.token}` } : {}),
      users: options.token ? ["reader"] : [],
      methods: options.methods ?? ["POST", "GET"],
    });

  it("tries what the source names first and the usual paths only when that fails", async () => {
    const named = await serve({ path: "/internal/gql" });
    const probes = await discover(named.baseUrl, [{ path: "/internal/gql", origin: "source" }]);
    expect(probes).toEqual([
      expect.objectContaining({
        path: "/internal/gql",
        verdict: "graphql",
        typename: "Query",
        method: "POST",
      }),
    ]);
    const usual = await serve({ path: "/v1/graphql" });
    const found = await discover(usual.baseUrl, [{ path: "/nothing-here", origin: "frontend" }]);
    expect(found.filter((probe) => probe.verdict === "graphql").map((probe) => probe.path)).toEqual([
      "/v1/graphql",
    ]);
    expect(found.find((probe) => probe.path === "/graphql")?.verdict).toBe("none");
    // Every usual path costs at most two requests (POST, then GET), never more.
    expect(usual.requests.length).toBeLessThanOrEqual(2 * 7);
  });

  it("signs in when an endpoint refuses anonymous callers", async () => {
    const server = await serve({ token: "t0ken" });
    const [probe] = await discover(server.baseUrl, [{ path: "/graphql", origin: "source" }], {
      token: "t0ken",
    });
    expect(probe).toMatchObject({ verdict: "graphql", user: "reader" });
  });

  it("reads GraphQL paths from scripts and from what the map holds", () => {
    const script = `const client = new ApolloClient({ uri: "/api/gql" });fetch('https://cdn.example.com/graphql');fetch("/static/schema.graphql")`;
    expect(graphqlPathsInText(script, "http://127.0.0.1:3000")).toEqual(["/api/gql"]);
    expect(graphqlPathsInText(`fetch("http://127.0.0.1:3000/v2/graphql/")`, "http://127.0.0.1:3000")).toEqual(
      ["/v2/graphql"],
    );
    expect(
      graphqlPathsInMap(
        ["/api/items", "/graphiql", "/api/graphql?x=1", "/items/{id}/graphql"],
        [{ path: "/", links: ["/playground/graphql"], forms: [] }],
      ),
    ).toEqual(["/graphiql", "/api/graphql", "/playground/graphql"]);
  });
});
