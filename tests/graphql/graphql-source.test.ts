import { describe, expect, it } from "vitest";
import { scanGraphqlSource, sdlFragmentsInFile } from "../../src/probes/graphql/scan-graphql-source.ts";
import { operationsFromSchema } from "../../src/probes/graphql/schema-operations.ts";
import { schemaFromSdl } from "../../src/probes/graphql/sdl-schema.ts";
import { endpointsInFile, normalizeEndpointPath } from "../../src/probes/graphql/source-endpoints.ts";
import { writeTree } from "../map/write-tree.ts";

const paths = (file: string, text: string) => endpointsInFile(file, text).map((endpoint) => endpoint.path);

describe("GraphQL endpoints in source", () => {
  it("finds Node servers by how each library is mounted", () => {
    expect(
      paths(
        "server.js",
        `const { graphqlHTTP } = require("express-graphql");\napp.use("/api/graphql", graphqlHTTP({ schema, graphiql: true }));`,
      ),
    ).toEqual(["/api/graphql"]);
    expect(
      paths(
        "http.ts",
        `import { createHandler } from "graphql-http/lib/use/express";\napp.all('/gql', createHandler({ schema }));`,
      ),
    ).toEqual(["/gql"]);
    expect(
      paths(
        "apollo.js",
        `const { ApolloServer } = require("apollo-server-express");\nserver.applyMiddleware({ app, path: "/v2/graphql" });`,
      ),
    ).toEqual(["/v2/graphql"]);
    expect(
      paths(
        "apollo3.js",
        `const { ApolloServer } = require('apollo-server-express');\nserver.applyMiddleware({ app });`,
      ),
    ).toEqual(["/graphql"]);
    expect(
      paths(
        "apollo4.ts",
        `import { expressMiddleware } from "@apollo/server/express4";\napp.use('/graphql', cors(), express.json(), expressMiddleware(server));`,
      ),
    ).toEqual(["/graphql"]);
    expect(
      paths(
        "yoga.ts",
        `import { createYoga } from "graphql-yoga";\nconst yoga = createYoga({ schema, graphqlEndpoint: "/api/yoga" });`,
      ),
    ).toEqual(["/api/yoga"]);
    expect(
      paths("yoga2.ts", `import { createYoga } from "graphql-yoga";\nconst yoga = createYoga({ schema });`),
    ).toEqual(["/graphql"]);
    expect(
      paths(
        "fastify.js",
        `const mercurius = require('mercurius');\napp.register(mercurius, { schema, resolvers, path: '/gql' });`,
      ),
    ).toEqual(["/gql"]);
  });

  it("finds Python servers: Flask views, Django URL patterns, ASGI mounts", () => {
    expect(
      paths(
        "app.py",
        `from flask_graphql import GraphQLView\napp.add_url_rule('/graphql', view_func=GraphQLView.as_view('graphql', schema=schema, graphiql=True))`,
      ),
    ).toEqual(["/graphql"]);
    // A project's own subclass of the view, spread over lines, is still a GraphQL view: it is given a schema.
    expect(
      paths(
        "views.py",
        `from graphql import GraphQLError\nclass Custom(GraphQLView): pass\napp.add_url_rule('/api/gql', view_func=Custom.as_view(\n  'gql',\n  schema=schema,\n  batch=True\n))`,
      ),
    ).toEqual(["/api/gql"]);
    expect(
      paths(
        "urls.py",
        `from graphene_django.views import GraphQLView\nurlpatterns = [path('admin/', admin.site.urls), path("graphql/", csrf_exempt(GraphQLView.as_view(graphiql=True)))]`,
      ),
    ).toEqual(["/graphql"]);
    expect(
      paths(
        "urls.py",
        `from graphene_django.views import GraphQLView\nurlpatterns = [re_path(r'^api/graphql/?$', GraphQLView.as_view())]`,
      ),
    ).toEqual(["/api/graphql"]);
    expect(
      paths(
        "main.py",
        `from ariadne.asgi import GraphQL\napp.mount("/graphql/", GraphQL(schema, debug=True))`,
      ),
    ).toEqual(["/graphql"]);
    expect(
      paths(
        "main.py",
        `from strawberry.fastapi import GraphQLRouter\ngraphql_app = GraphQLRouter(schema)\napp.include_router(graphql_app, prefix="/gql")`,
      ),
    ).toEqual(["/gql"]);
  });

  it("ignores routes and files that are not GraphQL", () => {
    expect(paths("server.js", `app.post("/login", handler);\napp.use("/api", router);`)).toEqual([]);
    expect(
      paths(
        "views.py",
        `from graphql import parse\napp.add_url_rule('/login', view_func=LoginView.as_view('login'))`,
      ),
    ).toEqual([]);
    expect(paths("README.md", `app.use("/graphql", graphqlHTTP({}))`)).toEqual([]);
    expect(normalizeEndpointPath("/graphql/*")).toBe("/graphql");
    expect(normalizeEndpointPath("/items/:id")).toBeUndefined();
  });
});

describe("SDL in source", () => {
  it("takes type definitions from .graphql files, tagged templates and Python strings, and skips client queries", () => {
    const fromJs = sdlFragmentsInFile(
      "src/schema.js",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal, on purpose
      "const typeDefs = gql`\n  type Query { books: [Book] }\n  ${extra}\n`;\nconst q = gql`query { books { title } }`;",
    );
    expect(fromJs).toHaveLength(1);
    expect(fromJs[0]?.origin).toBe("src/schema.js:1");
    const fromPython = sdlFragmentsInFile(
      "schema.py",
      'type_defs = gql("""\n  type Query {\n    hello: String!\n  }\n""")',
    );
    expect(fromPython).toHaveLength(1);
    // A client document parses as GraphQL but defines no types: it is not a schema.
    expect(
      schemaFromSdl([{ origin: "ops.graphql", text: "query Books { books { title } }" }]),
    ).toBeUndefined();
  });

  it("merges modular SDL: extensions without a base, duplicate types, undeclared scalars", () => {
    const built = schemaFromSdl([
      {
        origin: "a.graphql",
        text: "extend type Query { me: User }\ntype User { id: ID! joined: DateTime friends: [User] }",
      },
      {
        origin: "b.graphql",
        text: "extend type Query { users(first: Int): [User!]! }\ntype User { email: String }",
      },
      { origin: "c.graphql", text: "type Mutation { signUp(email: EmailAddress!): User }" },
    ]);
    expect(built?.used).toEqual(["a.graphql", "b.graphql", "c.graphql"]);
    const operations = operationsFromSchema(built!.schema, "/graphql");
    expect(operations.map((operation) => `${operation.graphql?.kind} ${operation.graphql?.field}`)).toEqual([
      "query me",
      "query users",
      "mutation signUp",
    ]);
    expect(operations[0]?.graphql?.selection).toBe("{ id joined email }");
    const signUp = operations[2]!;
    expect(signUp.graphql?.arguments).toEqual([{ name: "email", type: "EmailAddress!", required: true }]);
    expect(signUp.request_body?.schema).toHaveProperty("properties.email");
    expect((signUp.request_body!.schema!.properties as Record<string, unknown>).email).toMatchObject({
      type: "string",
      format: "email",
    });
  });

  it("scans a tree: endpoints and SDL, tests and the answer key left out", () => {
    const root = writeTree({
      "package.json": JSON.stringify({ dependencies: { "apollo-server-express": "3" } }),
      "src/schema/types.graphql": "type Query { items: [Item] }\ntype Item { id: ID! name: String }",
      "src/schema/mutations.gql": "type Mutation { addItem(name: String!): Item }",
      "src/server.js": `const { ApolloServer } = require("apollo-server-express");\nserver.applyMiddleware({ app, path: "/api/graphql" });`,
      "tests/fixtures/other.graphql": "type Query { fromTests: String }",
      "qa/answers.graphql": "type Query { fromTheAnswerKey: String }",
    });
    const scan = scanGraphqlSource(root, { exclude: [`${root}/qa/answers.graphql`] });
    expect(scan.endpoints).toEqual([
      { path: "/api/graphql", file: "src/server.js", line: 2, framework: "apollo-server" },
    ]);
    const fields = operationsFromSchema(scan.sdl!.schema, "/api/graphql").map(
      (operation) => operation.graphql?.field,
    );
    expect(fields).toEqual(["items", "addItem"]);
  });
});
