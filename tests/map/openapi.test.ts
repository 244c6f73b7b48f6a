import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QaasError } from "../../src/errors.ts";
import { loadOpenApi, operationsFromOpenApi } from "../../src/probes/openapi/load-openapi.ts";
import { writeTree } from "./write-tree.ts";

const yamlDocument = `
openapi: 3.0.3
info: { title: Fixture API, version: "1" }
servers:
  - url: "http://{host}/api/{version}"
    variables:
      host: { default: localhost }
      version: { default: v1 }
security:
  - bearer: []
paths:
  /folders/{folderId}:
    parameters:
      - $ref: "#/components/parameters/FolderId"
      - { name: trace, in: header, schema: { type: string } }
    get:
      operationId: getFolder
      tags: [folders]
      parameters:
        - { name: depth, in: query, required: true, schema: { type: integer }, example: 2 }
        - { name: trace, in: header, required: true, schema: { type: string, enum: [on] } }
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Folder" }
        "404": { description: missing }
    put:
      security: []
      requestBody:
        required: true
        content:
          text/plain: { schema: { type: string } }
          application/merge-patch+json:
            schema: { $ref: "#/components/schemas/Folder" }
            example: { name: renamed }
      responses:
        default: { description: anything }
components:
  securitySchemes:
    bearer: { type: http, scheme: bearer }
  parameters:
    FolderId: { name: folderId, in: path, required: true, schema: { type: string } }
  schemas:
    Folder:
      type: object
      properties:
        name: { type: string }
        children:
          type: array
          items: { $ref: "#/components/schemas/Folder" }
`;

const jsonDocument = {
  openapi: "3.1.0",
  info: { title: "Served API", version: "2" },
  servers: [{ url: "/svc" }],
  paths: {
    "/login": {
      post: {
        requestBody: {
          content: { "application/json": { schema: { $ref: "#/components/schemas/Credentials" } } },
        },
        responses: { "200": { description: "ok" } },
      },
    },
    "/me": {
      get: {
        security: [{ apiKey: [] }],
        responses: {
          "200": {
            description: "ok",
            content: { "application/json": { schema: { type: ["object", "null"] } } },
          },
        },
      },
    },
  },
  components: {
    securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "X-Key" } },
    schemas: {
      Credentials: {
        type: "object",
        required: ["username"],
        properties: { username: { type: "string" }, password: { type: "string" } },
      },
    },
  },
};

let server: http.Server;
let baseUrl: string;
const requested: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    requested.push(request.url ?? "");
    if (request.url === "/openapi.json") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(jsonDocument));
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("loadOpenApi and operationsFromOpenApi", () => {
  it("reads a 3.0 YAML file with $refs (one circular), base path from server variables, merged parameters", async () => {
    const root = writeTree({ "docs/openapi.yaml": yamlDocument });
    const loaded = await loadOpenApi("docs/openapi.yaml", { root });
    expect(loaded).toMatchObject({ source: "docs/openapi.yaml", version: "3.0.3", title: "Fixture API" });
    // The circular schema stays a $ref, so the map can still be written as JSON.
    expect(() => JSON.stringify(loaded.document)).not.toThrow();

    const operations = operationsFromOpenApi(loaded.document);
    expect(
      operations.map((operation) => `${operation.method} ${operation.path} ${operation.security}`),
    ).toEqual(["GET /api/v1/folders/{folderId} required", "PUT /api/v1/folders/{folderId} public"]);
    const [get, put] = operations;
    expect(get?.parameters).toEqual([
      { name: "folderId", in: "path", required: true, schema: { type: "string" } },
      { name: "trace", in: "header", required: true, schema: { type: "string", enum: ["on"] } },
      { name: "depth", in: "query", required: true, schema: { type: "integer" }, example: 2 },
    ]);
    expect(get).toMatchObject({
      operation_id: "getFolder",
      tags: ["folders"],
      seen_in: ["openapi"],
      documented: true,
    });
    expect(get?.responses["404"]).toEqual({});
    // The circular schema is expanded once per path; its repeat stays a $ref.
    expect(get?.responses["200"]?.schema).toEqual({
      type: "object",
      properties: {
        name: { type: "string" },
        children: { type: "array", items: { $ref: "#/components/schemas/Folder" } },
      },
    });
    expect(() => JSON.stringify(operations)).not.toThrow();
    expect(put?.request_body).toMatchObject({
      content_type: "application/merge-patch+json",
      required: true,
      example: { name: "renamed" },
    });
  });

  it("fetches a 3.1 JSON document from the live target by path, relative server URL as base path", async () => {
    const loaded = await loadOpenApi("/openapi.json", { baseUrl });
    expect(loaded).toMatchObject({
      source: `${baseUrl}/openapi.json`,
      version: "3.1.0",
      title: "Served API",
    });
    const operations = operationsFromOpenApi(loaded.document);
    expect(
      operations.map((operation) => `${operation.method} ${operation.path} ${operation.security}`),
    ).toEqual(["POST /svc/login public", "GET /svc/me required"]);
    expect(operations[0]?.request_body?.schema).toMatchObject({ required: ["username"] });
    expect(operationsFromOpenApi(loaded.document, { basePath: "/" })[0]?.path).toBe("/login");
  });

  it("fails with a named error for a missing document", async () => {
    const missing = loadOpenApi("/missing.json", { baseUrl });
    await expect(missing).rejects.toBeInstanceOf(QaasError);
    await expect(missing).rejects.toThrow(/answered 404/);
    await expect(loadOpenApi("nope.yaml", { root: writeTree({}) })).rejects.toThrow(/cannot read OpenAPI/);
  });
});
