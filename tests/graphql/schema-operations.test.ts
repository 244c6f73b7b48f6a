import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { composeInventory } from "../../src/map/inventory.ts";
import { requestSchema } from "../../src/probes/api/request-builder.ts";
import { graphqlAnswer } from "../../src/probes/graphql/graphql-answer.ts";
import { graphqlDocument, graphqlRequestBody } from "../../src/probes/graphql/graphql-request.ts";
import { operationsFromSchema } from "../../src/probes/graphql/schema-operations.ts";
import { schemaFromSdl } from "../../src/probes/graphql/sdl-schema.ts";
import { validValue } from "../../src/probes/schema-values/valid-value.ts";
import { FIXTURE_SDL, type GraphqlServer, startGraphqlServer } from "./graphql-server.ts";

let server: GraphqlServer;
beforeAll(async () => {
  server = await startGraphqlServer();
});
afterAll(() => server.close());

/** A nested part of a JSON Schema, or `{}` where it is missing. */
function at(schema: unknown, ...keys: string[]): Record<string, unknown> {
  let current = (schema ?? {}) as Record<string, unknown>;
  for (const key of keys) current = (current[key] ?? {}) as Record<string, unknown>;
  return current;
}

function fixtureOperations() {
  const sdl = schemaFromSdl([{ origin: "schema.graphql", text: FIXTURE_SDL }]);
  if (!sdl) throw new Error("fixture SDL not built");
  return composeInventory([], operationsFromSchema(sdl.schema, "/graphql"));
}

describe("root fields as operations", () => {
  it("makes one POST operation per query, mutation and subscription field, with typed arguments", () => {
    const operations = fixtureOperations();
    expect(operations.map((operation) => operation.operation_id)).toEqual([
      "query.pastes",
      "query.paste",
      "query.users",
      "query.me",
      "query.health",
      "query.search",
      "query.find",
      "mutation.createPaste",
      "mutation.deletePaste",
      "mutation.archivePaste",
      "subscription.pasteAdded",
    ]);
    for (const operation of operations) {
      expect(operation.method).toBe("POST");
      expect(operation.path).toBe("/graphql");
      expect(operation.seen_in).toEqual(["graphql"]);
      expect(operation.request_body?.content_type).toBe("application/json");
    }
    const pastes = operations.find((operation) => operation.graphql?.field === "pastes")!;
    expect(pastes.graphql).toEqual({
      kind: "query",
      field: "pastes",
      // A non-null argument with a default is not required; a nullable one never is.
      arguments: [
        { name: "filter", type: "String", required: false },
        { name: "limit", type: "Int", required: false },
      ],
      returns: "Paste",
      // Scalars and enums only, one level: `owner` is an object and is left out.
      selection: "{ id title content public kind views }",
    });
    const create = operations.find((operation) => operation.graphql?.field === "createPaste")!;
    expect(create.graphql?.arguments).toEqual([{ name: "input", type: "PasteInput!", required: true }]);
    expect(operations.find((operation) => operation.graphql?.field === "health")?.graphql?.selection).toBe(
      "",
    );
    expect(operations.find((operation) => operation.graphql?.field === "deletePaste")?.graphql?.returns).toBe(
      "Boolean",
    );
  });

  it("describes the variables as JSON Schema: input objects expanded, enums, integers, required", () => {
    const operations = fixtureOperations();
    const create = operations.find((operation) => operation.graphql?.field === "createPaste")!;
    const schema = create.request_body?.schema;
    expect(at(schema, "required")).toEqual(["input"]);
    const input = at(schema, "properties", "input");
    expect(input.type).toBe("object");
    expect(input.required).toEqual(["title"]);
    expect(at(input, "properties", "title")).toMatchObject({ type: "string" });
    expect(at(input, "properties", "kind")).toMatchObject({ type: "string", enum: ["TEXT", "CODE"] });
    expect(at(input, "properties", "tags")).toMatchObject({ type: "array", items: { type: "string" } });
    expect(at(input, "properties", "meta", "properties", "priority")).toMatchObject({ type: "integer" });
    // A recursive input stops expanding after a few levels instead of looping.
    expect(JSON.stringify(schema).length).toBeLessThan(5000);
    const search = operations.find((operation) => operation.graphql?.field === "search")!;
    expect(at(search.request_body?.schema, "required")).toEqual(["kind"]);
    expect(at(search.request_body?.schema, "properties", "where", "properties", "minViews")).toMatchObject({
      type: "number",
    });
    expect(create.request_body?.required).toBe(true);
    expect(operations.find((operation) => operation.graphql?.field === "users")?.request_body?.required).toBe(
      false,
    );
  });
});

describe("sending an operation", () => {
  it("writes a document declaring every argument as a variable", () => {
    const create = fixtureOperations().find((operation) => operation.graphql?.field === "createPaste")!;
    expect(graphqlDocument(create.graphql!)).toBe(
      "mutation CreatePaste($input: PasteInput!) { createPaste(input: $input) { id title content public kind views } }",
    );
    expect(graphqlRequestBody(create, { input: { title: "x" } })).toEqual({
      query: graphqlDocument(create.graphql!),
      variables: { input: { title: "x" } },
      operationName: "CreatePaste",
    });
    expect(() => graphqlRequestBody({ graphql: undefined }, {})).toThrow(/no graphql descriptor/);
  });

  it("fills the variables from the request schema and the server executes every query and mutation", async () => {
    const operations = fixtureOperations().filter((operation) => operation.graphql?.kind !== "subscription");
    for (const operation of operations) {
      const variables = validValue(requestSchema(operation) ?? {}, { seed: "qaas1234" });
      const response = await fetch(`${server.baseUrl}${operation.path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(graphqlRequestBody(operation, variables)),
      });
      const json = await response.json();
      const answer = graphqlAnswer({
        sequence: 0,
        startedAt: "",
        request: { method: "POST", url: "", headers: {} },
        response: {
          status: response.status,
          headers: {},
          setCookies: [],
          contentType: "application/json",
          body: "",
          truncated: false,
          json,
        },
        durationMs: 0,
      });
      expect(answer?.errors, `${operation.operation_id}: ${JSON.stringify(answer?.errors)}`).toEqual([]);
      expect(answer?.data).toHaveProperty(operation.graphql!.field);
    }
    expect(server.pastes.length).toBeGreaterThan(2);
  });
});
