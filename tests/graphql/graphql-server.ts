import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  buildSchema,
  type DocumentNode,
  execute,
  GraphQLError,
  Kind,
  NoSchemaIntrospectionCustomRule,
  parse,
  type SelectionSetNode,
  specifiedRules,
  type ValidationRule,
  validate,
} from "graphql";

// A small GraphQL server over node:http for the tests, built with the `graphql` package: pastes and their
// owners (a cycle), a mutation taking an input object, and switches for the behaviours qaas must handle —
// introspection refused (whole or only `__schema`), GET only, batching (capped or not), suggestions
// stripped, a depth limit, a bearer token.

export const FIXTURE_SDL = `
"""Pastes and the people who wrote them."""
type Query {
  pastes(filter: String, limit: Int = 10): [Paste!]!
  paste(id: ID!): Paste
  users: [User!]!
  me: User
  health: String
  search(kind: Kind!, where: PasteFilter): [Paste]
  find(term: String): [SearchResult!]
}

type Mutation {
  createPaste(input: PasteInput!): Paste
  deletePaste(id: ID!): Boolean!
  archivePaste(id: ID!): ArchivePayload
}

type Subscription {
  pasteAdded: Paste
}

type Paste {
  id: ID!
  title: String
  content: String
  public: Boolean
  kind: Kind
  views: Int
  owner: User
}

type User {
  id: ID!
  name: String
  pastes(limit: Int): [Paste!]!
}

union SearchResult = Paste | User

"""A mutation payload with no scalar of its own."""
type ArchivePayload {
  paste: Paste
}

enum Kind {
  TEXT
  CODE
}

input PasteInput {
  title: String!
  content: String
  kind: Kind = TEXT
  tags: [String!]
  meta: MetaInput
}

input MetaInput {
  source: String
  priority: Int
  parent: PasteInput
}

input PasteFilter {
  titleContains: String
  minViews: Float
}
`;

export interface GraphqlServerOptions {
  path?: string;
  introspection?: "open" | "refused" | "schema-only";
  getOnly?: boolean;
  batching?: boolean;
  batchLimit?: number;
  suggestions?: boolean;
  maxDepth?: number;
  /** Every request must carry `Authorization: Bearer <token>`. */
  token?: string;
  /** Refuses documents with more aliases than this. */
  maxAliases?: number;
  /** Refuses documents selecting more fields than this (duplicates included): a crude cost limit. */
  maxFields?: number;
  /** Refuses every named operation (a deny-list on operation names that unnamed documents slip past). */
  refuseOperationNames?: boolean;
  /** Lists ignore their `limit` and every owner holds this many more pastes: circular queries explode. */
  crowdedLists?: number;
  /** Errors carry the server's stack (as Apollo does outside production). */
  debugErrors?: boolean;
  /** Other routes: path → [content type, body]. */
  files?: Record<string, [string, string]>;
  /** A second path serving the same schema with introspection refused (an IDE route, a gateway). */
  closedPath?: string;
}

export interface GraphqlServer {
  baseUrl: string;
  requests: Array<{ method: string; url: string; body: string }>;
  pastes: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

interface PasteRecord {
  id: string;
  title: string;
  content: string;
  public: boolean;
  kind: string;
  views: number;
  ownerId: string;
}

export async function startGraphqlServer(options: GraphqlServerOptions = {}): Promise<GraphqlServer> {
  const schema = buildSchema(FIXTURE_SDL);
  const path = options.path ?? "/graphql";
  const users = [
    { id: "u1", name: "ada" },
    { id: "u2", name: "linus" },
  ];
  const pastes: PasteRecord[] = [
    { id: "1", title: "hello", content: "first", public: true, kind: "TEXT", views: 3, ownerId: "u1" },
    { id: "2", title: "code", content: "print(1)", public: true, kind: "CODE", views: 9, ownerId: "u2" },
  ];
  for (let index = 0; index < (options.crowdedLists ?? 0); index += 1) {
    const ownerId = index % 2 === 0 ? "u1" : "u2";
    pastes.push({
      id: String(pastes.length + 1),
      title: `filler ${index}`,
      content: "",
      public: true,
      kind: "TEXT",
      views: 0,
      ownerId,
    });
  }
  const limited = (limit: number | undefined, otherwise: number) =>
    options.crowdedLists ? undefined : (limit ?? otherwise);
  const userView = (user: { id: string; name: string }) => ({
    ...user,
    pastes: ({ limit }: { limit?: number }) =>
      pastes
        .filter((paste) => paste.ownerId === user.id)
        .slice(0, limited(limit, 100))
        .map(pasteView),
  });
  const pasteView = (paste: PasteRecord): Record<string, unknown> => ({
    ...paste,
    owner: () => userView(users.find((user) => user.id === paste.ownerId)!),
  });
  const root = {
    pastes: ({ filter, limit }: { filter?: string; limit?: number }) =>
      pastes
        .filter((paste) => !filter || paste.title.includes(filter))
        .slice(0, limited(limit, 10))
        .map(pasteView),
    paste: ({ id }: { id: string }) => {
      const found = pastes.find((paste) => paste.id === id);
      return found ? pasteView(found) : null;
    },
    users: () => users.map(userView),
    me: () => null,
    health: () => "ok",
    search: ({ kind }: { kind: string }) => pastes.filter((paste) => paste.kind === kind).map(pasteView),
    find: ({ term }: { term?: string }) => [
      ...pastes
        .filter((paste) => !term || paste.title.includes(term))
        .map((paste) => ({ __typename: "Paste", ...pasteView(paste) })),
      ...users
        .filter((user) => !term || user.name.includes(term))
        .map((user) => ({ __typename: "User", ...userView(user) })),
    ],
    archivePaste: ({ id }: { id: string }) => {
      const found = pastes.find((paste) => paste.id === id);
      return found ? { paste: pasteView(found) } : null;
    },
    createPaste: ({ input }: { input: { title: string; content?: string; kind?: string } }) => {
      const paste: PasteRecord = {
        id: String(pastes.length + 1),
        title: input.title,
        content: input.content ?? "",
        public: true,
        kind: input.kind ?? "TEXT",
        views: 0,
        ownerId: "u1",
      };
      pastes.push(paste);
      return pasteView(paste);
    },
    deletePaste: () => false,
  };

  const rules: ValidationRule[] = [...specifiedRules];
  if (options.introspection === "refused") rules.push(NoSchemaIntrospectionCustomRule);
  if (options.introspection === "schema-only") rules.push(noSchemaField);
  if (options.maxDepth !== undefined) rules.push(depthLimit(options.maxDepth));
  if (options.maxAliases !== undefined) rules.push(selectionLimit("aliases", options.maxAliases));
  if (options.maxFields !== undefined) rules.push(selectionLimit("fields", options.maxFields));
  if (options.refuseOperationNames) rules.push(noOperationNames);

  const closedRules = [...rules, NoSchemaIntrospectionCustomRule];

  const run = (payload: unknown, method: string, closed = false): Record<string, unknown> => {
    const { query, variables, operationName } = (payload ?? {}) as {
      query?: string;
      variables?: Record<string, unknown>;
      operationName?: string;
    };
    if (typeof query !== "string") return { errors: [{ message: "Must provide query string." }] };
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (error) {
      return { errors: [format(error as GraphQLError, options)] };
    }
    const errors = validate(schema, document, closed ? closedRules : rules);
    if (errors.length > 0) return { errors: errors.map((error) => format(error, options)) };
    const operation = document.definitions.find(
      (definition) => definition.kind === Kind.OPERATION_DEFINITION,
    );
    if (method === "GET" && operation?.kind === Kind.OPERATION_DEFINITION && operation.operation !== "query")
      return { errors: [{ message: "Can only perform a mutation operation from a POST request." }] };
    const result = execute({ schema, document, rootValue: root, variableValues: variables, operationName });
    return JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
  };

  const requests: GraphqlServer["requests"] = [];
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://fixture");
      requests.push({ method: request.method ?? "GET", url: request.url ?? "/", body });
      const json = (status: number, value: unknown) =>
        response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      const file = options.files?.[url.pathname];
      if (file) return response.writeHead(200, { "content-type": file[0] }).end(file[1]);
      const closed = url.pathname === options.closedPath;
      if (url.pathname !== path && !closed)
        return response.writeHead(404, { "content-type": "text/html" }).end("<h1>Not found</h1>");
      if (options.token && request.headers.authorization !== `Bearer ${options.token}`)
        return json(401, { errors: [{ message: "Not authenticated" }] });
      if (request.method === "GET") {
        const variables = url.searchParams.get("variables");
        return json(
          200,
          run(
            {
              query: url.searchParams.get("query") ?? undefined,
              variables: variables ? JSON.parse(variables) : undefined,
              operationName: url.searchParams.get("operationName") ?? undefined,
            },
            "GET",
            closed,
          ),
        );
      }
      if (request.method !== "POST" || options.getOnly)
        return json(405, { errors: [{ message: "GraphQL only supports GET requests." }] });
      let payload: unknown;
      try {
        payload = JSON.parse(body);
      } catch {
        return json(400, { errors: [{ message: "POST body sent invalid JSON." }] });
      }
      if (Array.isArray(payload)) {
        if (!options.batching) return json(400, { errors: [{ message: "Batching is not supported." }] });
        if (options.batchLimit !== undefined && payload.length > options.batchLimit)
          return json(400, { errors: [{ message: `Batch limited to ${options.batchLimit} operations.` }] });
        return json(
          200,
          payload.map((item) => run(item, "POST")),
        );
      }
      return json(200, run(payload, "POST", closed));
    });
  });
  // Generated `node --test` files exit once the server lets their idle keep-alive sockets go.
  server.keepAliveTimeout = 200;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    pastes: pastes as unknown as Array<Record<string, unknown>>,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function format(error: GraphQLError, options: GraphqlServerOptions): Record<string, unknown> {
  const message =
    options.suggestions === false ? error.message.replace(/\s*Did you mean[^?]*\?/g, "") : error.message;
  return {
    message,
    ...(error.locations ? { locations: error.locations } : {}),
    ...(options.debugErrors
      ? { extensions: { exception: { stacktrace: (new Error(message).stack ?? "").split("\n") } } }
      : {}),
  };
}

/** Refuses documents with more aliased fields (or more field selections) than `max`. */
function selectionLimit(what: "aliases" | "fields", max: number): ValidationRule {
  return (context) => {
    let count = 0;
    return {
      Field(node) {
        if (what === "fields" || node.alias) count += 1;
        if (count === max + 1)
          context.reportError(new GraphQLError(`Too many ${what} (limit ${max})`, { nodes: node }));
      },
    };
  };
}

const noOperationNames: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (node.name)
      context.reportError(
        new GraphQLError(`Operation name "${node.name.value}" is not allowed`, { nodes: node }),
      );
  },
});

/** Refuses `__schema` only (as some servers' middleware does), leaving `__type` open. */
const noSchemaField: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value === "__schema")
      context.reportError(new GraphQLError("Introspection is disabled", { nodes: node }));
  },
});

/** Refuses operations (fragments spread in, as the standard introspection query uses them) deeper than `max`. */
function depthLimit(max: number): ValidationRule {
  return (context) => ({
    OperationDefinition(node) {
      const fragments = new Map(
        context
          .getDocument()
          .definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION)
          .map((definition) => [
            definition.kind === Kind.FRAGMENT_DEFINITION ? definition.name.value : "",
            definition,
          ]),
      );
      const depth = (set: SelectionSetNode | undefined, seen: Set<string>): number => {
        if (!set) return 0;
        let deepest = 0;
        for (const selection of set.selections) {
          if (selection.kind === Kind.FIELD)
            deepest = Math.max(deepest, 1 + depth(selection.selectionSet, seen));
          else if (selection.kind === Kind.INLINE_FRAGMENT)
            deepest = Math.max(deepest, depth(selection.selectionSet, seen));
          else if (!seen.has(selection.name.value)) {
            const fragment = fragments.get(selection.name.value);
            if (fragment?.kind === Kind.FRAGMENT_DEFINITION)
              deepest = Math.max(
                deepest,
                depth(fragment.selectionSet, new Set([...seen, selection.name.value])),
              );
          }
        }
        return deepest;
      };
      const found = depth(node.selectionSet, new Set());
      if (found > max)
        context.reportError(
          new GraphQLError(`Query depth ${found} exceeds the limit of ${max}`, { nodes: node }),
        );
    },
  });
}
