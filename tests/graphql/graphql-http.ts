import http from "node:http";
import type { AddressInfo } from "node:net";
import { type GraphQLSchema, graphql } from "graphql";
import { composeInventory } from "../../src/map/inventory.ts";
import type { SystemMap } from "../../src/map/system-map.ts";
import { operationsFromSchema } from "../../src/probes/graphql/schema-operations.ts";
import { schemaFromSdl } from "../../src/probes/graphql/sdl-schema.ts";
import { undocumentedMap } from "../fixtures/probe-harness.ts";

/** A GraphQL API over HTTP on a loopback port: `POST` any path with `{ query, variables }`. */
export async function serveGraphql(
  schema: GraphQLSchema,
  rootValue: Record<string, unknown>,
): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    request.on("end", async () => {
      const payload = JSON.parse(body || "{}") as { query?: string; variables?: Record<string, unknown> };
      const result = await graphql({
        schema,
        source: payload.query ?? "",
        rootValue,
        variableValues: payload.variables,
      });
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(result));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The system map MAPPER would save for a GraphQL API described by `sdl` and served at `/graphql`. */
export function graphqlSystemMap(target: string, baseUrl: string, sdl: string): SystemMap {
  const schema = schemaFromSdl([{ origin: "fixture", text: sdl }])!.schema;
  return undocumentedMap(target, baseUrl, composeInventory([], operationsFromSchema(schema, "/graphql")));
}
