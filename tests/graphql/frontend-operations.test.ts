import path from "node:path";
import { buildSchema, execute, parse, validate } from "graphql";
import { afterEach, describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { discoverRootFields } from "../../src/probes/graphql/discover-fields.ts";
import { shapesFromDocuments } from "../../src/probes/graphql/document-shapes.ts";
import { graphqlDocumentsInText } from "../../src/probes/graphql/documents-in-text.ts";
import { graphqlRequestBody } from "../../src/probes/graphql/graphql-request.ts";
import type { GraphqlSend } from "../../src/probes/graphql/graphql-transport.ts";
import { guardedDocument, probeShapes } from "../../src/probes/graphql/probe-shapes.ts";
import type { HttpExchange, HttpRequestSpec } from "../../src/probes/http/http-types.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { LoadedTarget } from "../../src/tools/context.ts";
import { mapDraft } from "../../src/tools/servers/map-draft.ts";
import { mapGraphqlTools } from "../../src/tools/servers/map-graphql-tools.ts";
import { writeTree } from "../map/write-tree.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import { type GraphqlServer, startGraphqlServer } from "./graphql-server.ts";

// Introspection refused and no SDL in reach: the schema is sketched from the operations the application's
// own pages and bundle send, and each root field is described by the server's validation errors.

const PAGE = `<!doctype html><html><body><h1>Pastes</h1>
<script src="/static/app.js"></script>
<script>
  function list(filter, size) {
    const query = \`query ListPastes {
      pastes(filter: "\${filter}", limit: \${size}) { id title colour owner { name } }
    }\`;
    return fetch("/graphql", { method: "POST", body: JSON.stringify({ query }) });
  }
  function removeOne(id) { return fetch(\`/graphql?query=mutation%20%7B%20deletePaste(id%3A%20\${id})%20%7D\`); }
</script></body></html>`;

const BUNDLE =
  'var add={kind:"Document",loc:{source:{body:"mutation AddPaste($input: PasteInput!) {\\n  createPaste(input: $input) { ...PasteParts }\\n}\\nfragment PasteParts on Paste { id title kind }"}}};' +
  'var who=gql`{ me { id name } }`;var old="query Gone { retired { id } }";function query(sql){return db.run(sql)}';

const servers: GraphqlServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function managedTarget(baseUrl: string, files?: Record<string, string>): LoadedTarget {
  const root = files ? writeTree(files, "qaas-graphql-ops-") : undefined;
  const profile = TargetProfileSchema.parse({
    name: "fixture-graphql-operations",
    source: { path: "." },
    environment: { mode: "managed", base_url: baseUrl },
  });
  return { profile, file: path.join(root ?? "/tmp", "profile.yaml"), root, goldenLedger: undefined };
}

describe("map_graphql without introspection", () => {
  it("maps the operations the frontend sends, typed by the server's validation errors, and runs none", async () => {
    const server = await startGraphqlServer({
      introspection: "refused",
      files: { "/": ["text/html", PAGE], "/static/app.js": ["application/javascript", BUNDLE] },
    });
    servers.push(server);
    const pastesBefore = server.pastes.length;
    const context = fakeRunContext({ target: managedTarget(server.baseUrl) });
    mapDraft(context).pages = [
      { path: "/", status: 200, html: true, links: [], forms: [], scripts: ["/static/app.js"] },
    ];
    const result = await callTool(mapGraphqlTools[0]!, {}, context);
    expect(result).toMatchObject({
      ok: true,
      data: { endpoints: [{ path: "/graphql", schema_from: "operations" }] },
    });
    const notes = (result as { data: { notes: string[] } }).data.notes.join("\n");
    expect(notes).toMatch(/described (\d+) of \1\b/);
    expect(notes).toMatch(/dropped \(query\.retired\)/);

    const operations = mapDraft(context).candidates.get("graphql") ?? [];
    const byField = new Map(operations.map((operation) => [operation.graphql?.field, operation.graphql]));
    expect([...byField.keys()]).toEqual(
      expect.arrayContaining(["createPaste", "deletePaste", "me", "pastes"]),
    );
    expect(byField.has("retired")).toBe(false);
    // Literal guesses (`"${filter}"`, `${size}`, `${id}`) replaced by what the server expects.
    expect(byField.get("pastes")?.arguments).toEqual([
      { name: "filter", type: "String", required: false },
      { name: "limit", type: "Int", required: false },
    ]);
    expect(byField.get("deletePaste")?.arguments).toEqual([{ name: "id", type: "ID!", required: true }]);
    expect(byField.get("createPaste")?.arguments).toEqual([
      { name: "input", type: "PasteInput!", required: true },
    ]);
    expect(byField.get("pastes")?.returns).toBe("Paste");
    expect(byField.get("me")?.returns).toBe("User");
    // A field the page selects but the type lacks (an old frontend) is left out of the selection.
    expect(byField.get("pastes")?.selection).not.toMatch(/colour/);
    // Fields no page selects (`content`, `public`) found by asking the type for likely names.
    expect(byField.get("pastes")?.selection).toMatch(/\bcontent\b.*\bpublic\b/);

    // Mapping ran nothing: every document it sent carried the unused variable that fails validation.
    expect(server.pastes).toHaveLength(pastesBefore);
    const shapeProbes = server.requests.filter((request) => request.body.includes("QaasShape"));
    expect(shapeProbes.length).toBeGreaterThan(4);
    expect(shapeProbes.every((request) => request.body.includes("$qaasNeverUsed"))).toBe(true);

    // The mapped operations are valid documents on the real schema.
    const read = await fetch(`${server.baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(
        graphqlRequestBody(
          operations.find((operation) => operation.graphql?.field === "pastes") as Pick<Operation, "graphql">,
          { filter: "", limit: 2 },
        ),
      ),
    });
    const answer = (await read.json()) as { data?: { pastes?: unknown[] }; errors?: unknown };
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.pastes?.length).toBeGreaterThan(0);
  });

  it("maps a door that refuses introspection once, at the endpoint that answered it, whatever the order", async () => {
    const server = await startGraphqlServer({
      closedPath: "/graphiql",
      files: { "/": ["text/html", PAGE], "/static/app.js": ["application/javascript", BUNDLE] },
    });
    servers.push(server);
    const context = fakeRunContext({ target: managedTarget(server.baseUrl) });
    mapDraft(context).pages = [
      { path: "/", status: 200, html: true, links: [], forms: [], scripts: ["/static/app.js"] },
    ];
    const result = await callTool(mapGraphqlTools[0]!, { paths: ["/graphiql", "/graphql"] }, context);
    expect(result).toMatchObject({
      ok: true,
      data: {
        operations: 11,
        endpoints: [
          { path: "/graphql", schema_from: "introspection", operations: 11 },
          { path: "/graphiql", schema_from: "operations", same_as: "/graphql", operations: 0 },
        ],
      },
    });
    expect(server.requests.some((request) => request.body.includes("QaasShape"))).toBe(false);
  });

  it("asks for likely names: the server's suggestions and its silence about real ones add fields no page sends", async () => {
    const mapped = async (suggestions: boolean) => {
      const server = await startGraphqlServer({
        introspection: "refused",
        suggestions,
        files: { "/": ["text/html", "<script>const q = `query L { pastes(limit: 3) { id } }`;</script>"] },
      });
      servers.push(server);
      const context = fakeRunContext({ target: managedTarget(server.baseUrl) });
      mapDraft(context).pages = [{ path: "/", status: 200, html: true, links: [], forms: [], scripts: [] }];
      await callTool(mapGraphqlTools[0]!, {}, context);
      const operations = mapDraft(context).candidates.get("graphql") ?? [];
      return { server, operations, fields: operations.map((operation) => operation.graphql?.field) };
    };
    const open = await mapped(true);
    // `users` is a common name the server raised no error about; `archivePaste` only a suggestion names.
    expect(open.fields).toEqual(
      expect.arrayContaining(["pastes", "users", "paste", "createPaste", "archivePaste"]),
    );
    const users = open.operations.find((operation) => operation.graphql?.field === "users")!;
    expect(users.graphql).toMatchObject({ returns: "User", selection: "{ id name }" });
    const paste = open.operations.find((operation) => operation.graphql?.field === "paste")!;
    expect(paste.graphql?.arguments).toEqual([{ name: "id", type: "ID!", required: true }]);
    const read = await fetch(`${open.server.baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(graphqlRequestBody(users as Pick<Operation, "graphql">)),
    });
    expect(((await read.json()) as { errors?: unknown }).errors).toBeUndefined();

    const quiet = await mapped(false);
    expect(quiet.fields).toContain("users");
    expect(quiet.fields).not.toContain("archivePaste");
  });

  it("sketches the schema from client operations in the source when nothing is live", async () => {
    const context = fakeRunContext({
      target: {
        ...managedTarget("http://127.0.0.1:9", {
          "web/src/queries.ts":
            "export const LIST = gql`query List($first: Int) { pastes(limit: $first) { id } }`;",
        }),
        profile: TargetProfileSchema.parse({
          name: "static-graphql",
          source: { path: "." },
          environment: { mode: "none", base_url: "http://127.0.0.1:9" },
        }),
      },
    });
    const result = await callTool(mapGraphqlTools[0]!, {}, context);
    expect(result).toMatchObject({
      ok: true,
      data: {
        operations: 1,
        endpoints: [{ path: "/graphql", found_by: "assumed", schema_from: "operations" }],
      },
    });
    expect(mapDraft(context).candidates.get("graphql")?.[0]?.graphql?.arguments).toEqual([
      { name: "limit", type: "Int", required: false },
    ]);
  });
});

describe("probeShapes", () => {
  it("reads the older graphql-core wording (no `$`, 'sub selection') and never sends without the guard", async () => {
    const shapes = shapesFromDocuments(graphqlDocumentsInText("query Q { pastes(public: ${flag}) { id } }"));
    const sent: string[] = [];
    const send: GraphqlSend = async (spec) => {
      const query = (JSON.parse(spec.body ?? "{}") as { query: string }).query;
      sent.push(query);
      const errors = [
        { message: 'Field "pastes" of type "[PasteObject]" must have a sub selection.' },
        { message: 'Variable "$qaasNeverUsed" is never used in operation "QaasShape".' },
        { message: 'Variable "a0" of type "[[Boolean!]!]!" used in position expecting type "Boolean".' },
      ];
      return exchangeAnswering(spec, { errors });
    };
    const outcome = await probeShapes(send, "http://127.0.0.1:9/graphql", ["POST"], shapes);
    // The second request asks the object type for likely field names; an answer that reports none of them
    // missing (this scripted one) adds none.
    expect(outcome).toMatchObject({ described: 1, dropped: [], requests: 2 });
    expect(sent[1]).toMatch(/^query QaasShape\(\$qaasNeverUsed: Boolean!\) \{ pastes \{ id uuid name /);
    expect(sent[0]).toMatch(/^query QaasShape\(\$qaasNeverUsed: Boolean!, \$a0: \[\[Boolean!\]!\]!\)/);
    const pastes = shapes.types.get("Query")?.get("pastes");
    expect(pastes?.arguments.get("public")).toEqual({ type: "Boolean", guessed: false });
    expect(pastes?.returns).toBe("[PasteObject]");
    expect([...(shapes.types.get("PasteObject")?.keys() ?? [])]).toEqual(["id"]);
  });

  it("writes documents that cannot run even where a server skips validation", () => {
    const wiped: string[] = [];
    const schema = buildSchema("type Query { ok: Boolean } type Mutation { wipeEverything: Boolean }");
    const rootValue = { wipeEverything: () => wiped.push("wiped") > 0 };
    const document = parse(guardedDocument("mutation", "wipeEverything"));
    expect(validate(schema, document).map((error) => error.message)).toEqual([
      'Variable "$qaasNeverUsed" is never used in operation "QaasShape".',
    ]);
    const result = execute({ schema, document, rootValue }) as { errors?: Array<{ message: string }> };
    expect(result.errors?.[0]?.message).toMatch(/\$qaasNeverUsed.*required/);
    expect(wiped).toEqual([]);
  });

  it("keeps the common names within the cap however many fields the frontend already names", async () => {
    const nouns =
      "paste note file team project ticket invoice cart board card label sprint wiki page asset".split(" ");
    const page = nouns.map((noun) => `gql\`query ${noun}Q { ${noun}s(first: 1) { id } }\``).join(" ");
    const shapes = shapesFromDocuments(graphqlDocumentsInText(page));
    const asked: string[] = [];
    const send: GraphqlSend = async (spec) => {
      const query = (JSON.parse(spec.body ?? "{}") as { query: string }).query;
      const names = /\{ (.*) \}$/.exec(query)?.[1]?.split(" ") ?? [];
      asked.push(...names);
      const errors = names
        .filter((name) => name !== "login")
        .map((name) => ({ message: `Cannot query field "${name}" on type "Query".` }));
      errors.push({ message: 'Variable "$qaasNeverUsed" is never used in operation "QaasShape".' });
      return exchangeAnswering(spec, { errors });
    };
    const discovery = await discoverRootFields(send, "http://127.0.0.1:9/graphql", ["POST"], shapes);
    expect(asked.filter((name) => name.startsWith("create")).length).toBeGreaterThan(10);
    expect(discovery.found).toContain("query.login");
  });

  it("stops asking when a server runs a document it should have refused", async () => {
    const shapes = shapesFromDocuments(
      graphqlDocumentsInText("gql`query A { a(x: 1) } query B { b(y: 2) }`"),
    );
    const send: GraphqlSend = async (spec) => exchangeAnswering(spec, { data: { a: "ran" } });
    const outcome = await probeShapes(send, "http://127.0.0.1:9/graphql", ["POST"], shapes);
    expect(outcome).toMatchObject({ executed: "query.a", requests: 1 });
  });
});

function exchangeAnswering(spec: HttpRequestSpec, body: unknown): HttpExchange {
  return {
    sequence: 1,
    startedAt: new Date(0).toISOString(),
    request: { method: spec.method, url: spec.url, headers: {} },
    response: {
      status: 200,
      headers: { "content-type": "application/json" },
      setCookies: [],
      contentType: "application/json",
      body: JSON.stringify(body),
      truncated: false,
      json: body,
    },
    durationMs: 1,
  };
}
