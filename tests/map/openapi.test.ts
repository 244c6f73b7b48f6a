import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { QaasError } from "../../src/errors.ts";
import { fetchThroughClient } from "../../src/probes/http/client-fetch.ts";
import { Semaphore } from "../../src/probes/http/concurrency.ts";
import { HttpClient, RequestBudget } from "../../src/probes/http/http-client.ts";
import { discoveredNote, discoverOpenApi, servedOpenApi } from "../../src/probes/openapi/discover-openapi.ts";
import { loadOpenApi, operationsFromOpenApi } from "../../src/probes/openapi/load-openapi.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { LoadedTarget } from "../../src/tools/context.ts";
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

// Swagger 2.0, host-less: basePath, inline parameter types, body and formData parameters, consumes,
// produces, securityDefinitions with an optional alternative, x-nullable, a file field and a cycle.
const swaggerDocument = `
swagger: "2.0"
info: { title: Pet Store, version: "1" }
basePath: /v2/
consumes: [application/json]
produces: [application/json]
securityDefinitions:
  api_key: { type: apiKey, name: api_key, in: header }
  basic: { type: basic }
security:
  - api_key: []
paths:
  /pets/{petId}:
    parameters:
      - { name: petId, in: path, required: true, type: integer, format: int64 }
    get:
      operationId: getPet
      tags: [pets]
      parameters:
        - { name: fields, in: query, type: array, items: { type: string }, collectionFormat: csv }
        - { name: X-Trace, in: header, required: true, type: string, enum: ["on", "off"], x-example: "on" }
      responses:
        "200": { description: ok, schema: { $ref: "#/definitions/Pet" } }
        "404": { description: missing }
    post:
      summary: Update a pet with form data
      consumes: [application/x-www-form-urlencoded, multipart/form-data]
      parameters:
        - { name: name, in: formData, type: string, required: true, maxLength: 40 }
        - { name: status, in: formData, type: string }
      responses: { "200": { description: ok } }
    put:
      security: []
      consumes: [application/xml, application/vnd.pets+json]
      parameters:
        - { in: body, name: body, required: true, schema: { $ref: "#/definitions/Pet" } }
      responses: { default: { description: anything } }
  /pets/{petId}/photo:
    post:
      consumes: [multipart/form-data]
      security: [{}, { basic: [] }]
      parameters:
        - { name: petId, in: path, required: true, type: integer }
        - { name: file, in: formData, type: file, required: true }
        - { name: caption, in: formData, type: string }
      responses: { "201": { description: created } }
  /pets/{petId}/label:
    get:
      produces: [text/plain]
      responses:
        "200": { description: ok, schema: { type: string } }
definitions:
  Pet:
    type: object
    required: [name]
    properties:
      name: { type: string, example: Rex }
      tag: { type: string, x-nullable: true }
      parent: { $ref: "#/definitions/Pet" }
`;

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

  it("reads a host-less Swagger 2.0 document: basePath, inline types, body, formData, consumes, produces, security", async () => {
    const root = writeTree({ "api/swagger.yaml": swaggerDocument });
    const loaded = await loadOpenApi("api/swagger.yaml", { root });
    expect(loaded).toMatchObject({ source: "api/swagger.yaml", version: "2.0", title: "Pet Store" });
    expect(() => JSON.stringify(loaded.document)).not.toThrow();

    const operations = operationsFromOpenApi(loaded.document);
    expect(
      operations.map((operation) => `${operation.method} ${operation.path} ${operation.security}`),
    ).toEqual([
      "GET /v2/pets/{petId} required",
      "PUT /v2/pets/{petId} public",
      "POST /v2/pets/{petId} required",
      "POST /v2/pets/{petId}/photo public",
      "GET /v2/pets/{petId}/label required",
    ]);
    const [get, put, form, photo, label] = operations;
    expect(get?.parameters).toEqual([
      { name: "petId", in: "path", required: true, schema: { type: "integer", format: "int64" } },
      { name: "fields", in: "query", required: false, schema: { type: "array", items: { type: "string" } } },
      {
        name: "X-Trace",
        in: "header",
        required: true,
        schema: { type: "string", enum: ["on", "off"] },
        example: "on",
      },
    ]);
    expect(get).toMatchObject({
      operation_id: "getPet",
      tags: ["pets"],
      documented: true,
      seen_in: ["openapi"],
    });
    expect(get?.request_body).toBeUndefined();
    // The cycle is expanded once and x-nullable becomes the nullable the response validator knows.
    expect(get?.responses["200"]?.schema).toEqual({
      type: "object",
      required: ["name"],
      properties: {
        name: { type: "string", example: "Rex" },
        tag: { type: "string", nullable: true },
        parent: { $ref: "#/definitions/Pet" },
      },
    });
    expect(get?.responses["404"]).toEqual({});
    // A body parameter is sent as the first JSON type the operation consumes, with its example.
    expect(put?.request_body).toMatchObject({
      content_type: "application/vnd.pets+json",
      required: true,
      schema: { type: "object", required: ["name"] },
    });
    expect(form?.summary).toBe("Update a pet with form data");
    expect(form?.request_body).toEqual({
      content_type: "application/x-www-form-urlencoded",
      required: true,
      schema: {
        type: "object",
        properties: { name: { type: "string", maxLength: 40 }, status: { type: "string" } },
        required: ["name"],
      },
    });
    expect(photo?.parameters).toEqual([
      { name: "petId", in: "path", required: true, schema: { type: "integer" } },
    ]);
    expect(photo?.request_body).toEqual({
      content_type: "multipart/form-data",
      required: true,
      schema: {
        type: "object",
        properties: { file: { type: "string", format: "binary" }, caption: { type: "string" } },
        required: ["file"],
      },
    });
    // A text/plain answer has no JSON schema to check.
    expect(label?.responses["200"]).toEqual({});
    expect(operationsFromOpenApi(loaded.document, { basePath: "/" })[0]?.path).toBe("/pets/{petId}");
  });

  it("refuses a document that is neither OpenAPI 3.x nor Swagger 2.0, naming what it found", async () => {
    const root = writeTree({
      "old.json": JSON.stringify({ swaggerVersion: "1.2", apis: [] }),
      "four.yaml": "openapi: 4.0.0\npaths: {}\n",
    });
    await expect(loadOpenApi("old.json", { root })).rejects.toThrow(
      /old\.json is not an OpenAPI 3\.x or Swagger 2\.0 document \(openapi: null\)/,
    );
    await expect(loadOpenApi("four.yaml", { root })).rejects.toThrow(/\(openapi: "4\.0\.0"\)/);
  });

  it("fails with a named error for a missing document", async () => {
    const missing = loadOpenApi("/missing.json", { baseUrl });
    await expect(missing).rejects.toBeInstanceOf(QaasError);
    await expect(missing).rejects.toThrow(/answered 404/);
    await expect(loadOpenApi("nope.yaml", { root: writeTree({}) })).rejects.toThrow(/cannot read OpenAPI/);
  });
});

describe("discoverOpenApi", () => {
  const documentWith = (...paths: string[]) =>
    JSON.stringify({
      openapi: "3.0.3",
      info: { title: `${paths.length} paths`, version: "1" },
      paths: Object.fromEntries(
        paths.map((path) => [path, { get: { responses: { "200": { description: "ok" } } } }]),
      ),
    });
  const target = (
    root: string | undefined,
    extra: Partial<LoadedTarget> = {},
    baseUrl?: string,
  ): LoadedTarget => ({
    profile: TargetProfileSchema.parse({
      name: "x",
      source: { path: "." },
      environment: baseUrl ? { mode: "external", base_url: baseUrl } : { mode: "none" },
    }),
    file: "/profiles/x.yaml",
    root,
    goldenLedger: undefined,
    ...extra,
  });

  it("finds the fullest document in the tree, skipping vendored and test folders and the golden ledger", async () => {
    const root = writeTree({
      "node_modules/pkg/openapi.json": documentWith("/a", "/b", "/c", "/d"),
      "tests/fixtures/openapi.yaml": documentWith("/a", "/b", "/c", "/d"),
      "answers/openapi-key.json": documentWith("/a", "/b", "/c", "/d"),
      "docs/openapi-partial.json": documentWith("/a"),
      "api/openapi.json": documentWith("/a", "/b"),
      "swagger-config.json": JSON.stringify({ urls: [{ url: "/x" }] }),
    });
    const found = await discoverOpenApi(
      target(root, { goldenLedger: path.join(root, "answers/openapi-key.json") }),
    );
    expect(found).toMatchObject({
      location: "api/openapi.json",
      found: "file api/openapi.json in the source tree (also found: docs/openapi-partial.json)",
      loaded: { source: "api/openapi.json", title: "2 paths", version: "3.0.3" },
    });
    expect(found && discoveredNote(found)).toBe(
      "the profile names no OpenAPI document (api.openapi); using the file api/openapi.json in the source tree (also found: docs/openapi-partial.json)",
    );
    expect(await discoverOpenApi(target(writeTree({ "app.py": "print(1)\n" })))).toBeUndefined();
  });

  it("prefers the document the code loads (connexion add_api under specification_dir), whatever its name", async () => {
    const root = writeTree({
      "openapi.json": documentWith("/a", "/b", "/c"),
      "service/app.py": [
        "import connexion",
        "app = connexion.App(__name__, specification_dir='spec/')",
        "app.add_api('service.yml')",
      ].join("\n"),
      "service/spec/service.yml": swaggerDocument,
    });
    const found = await discoverOpenApi(target(root));
    expect(found?.location).toBe("service/spec/service.yml");
    expect(found?.found).toBe(
      "file service/spec/service.yml, loaded by service/app.py:3 (also found: openapi.json)",
    );
    expect(found?.loaded.version).toBe("2.0");
    expect(operationsFromOpenApi(found!.loaded.document)).toHaveLength(5);
  });

  describe("on a live target", () => {
    let live: http.Server;
    let liveUrl: string;
    const seen: string[] = [];
    beforeAll(async () => {
      live = http.createServer((request, response) => {
        seen.push(`${request.method} ${request.url}`);
        if (request.url === "/openapi.json") {
          // A single-page app answers every path with its shell: 200, but not a document.
          response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><html></html>");
        } else if (request.url === "/swagger.json") {
          response.writeHead(302, { location: "/v2/api-docs" }).end();
        } else if (request.url === "/v2/api-docs" || request.url === "/reference-json") {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify(parseYaml(swaggerDocument)));
        } else {
          response.writeHead(404).end();
        }
      });
      await new Promise<void>((resolve) => live.listen(0, "127.0.0.1", resolve));
      liveUrl = `http://127.0.0.1:${(live.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => live.close(() => resolve())));

    it("GETs the usual URLs in order and takes the first answer that parses as a document", async () => {
      seen.length = 0;
      const found = await discoverOpenApi(target(writeTree({}), {}, liveUrl));
      expect(found).toMatchObject({ location: "/v2/api-docs", found: "served at /v2/api-docs" });
      expect(found?.loaded.source).toBe(`${liveUrl}/v2/api-docs`);
      expect(seen).toEqual([
        "GET /openapi.json",
        "GET /openapi.yaml",
        "GET /swagger.json",
        "GET /v3/api-docs",
        "GET /v2/api-docs",
      ]);
    });

    it("goes through the run's client when given one: refused paths are never sent, every GET is budgeted", async () => {
      const budget = new RequestBudget(100);
      const client = new HttpClient({
        limiter: new Semaphore(2),
        budget,
        writesAllowed: false,
        refuse: (_method, url) => (new URL(url).pathname === "/v2/api-docs" ? "excluded" : undefined),
      });
      seen.length = 0;
      const found = await discoverOpenApi(target(writeTree({}), {}, liveUrl), {
        fetch: fetchThroughClient(client),
      });
      expect(found).toBeUndefined();
      expect(seen).not.toContain("GET /v2/api-docs");
      expect(budget.remaining()).toBe(100 - seen.length);
    });

    it("asks first where the code says it serves the document, and never asks when told not to", async () => {
      const root = writeTree({
        "src/main.ts": [
          "import { SwaggerModule } from '@nestjs/swagger';",
          "const document = SwaggerModule.createDocument(app, config);",
          "SwaggerModule.setup('reference', app, document);",
        ].join("\n"),
      });
      seen.length = 0;
      const found = await discoverOpenApi(target(root, {}, liveUrl));
      expect(found?.found).toBe("served at /reference-json (configured in src/main.ts:3)");
      expect(seen).toEqual(["GET /reference-json"]);
      seen.length = 0;
      expect(await discoverOpenApi(target(root, {}, liveUrl), { live: false })).toBeUndefined();
      expect(await servedOpenApi(`${liveUrl}/nothing-here`)).toBeUndefined();
      expect(seen.every((request) => request.startsWith("GET /nothing-here/"))).toBe(true);
    });
  });
});
