// Where a target's source mounts a GraphQL endpoint, by the way each common server library is wired:
// Node (Apollo Server, express-graphql, graphql-http, graphql-yoga, mercurius, NestJS) and Python (Flask
// views, Django URL patterns, Starlette/FastAPI mounts of graphene, strawberry and ariadne apps). A
// library that serves a default path without naming one gives that default.

export interface SourceEndpoint {
  path: string;
  file: string;
  line: number;
  framework: string;
}

interface Pattern {
  framework: string;
  /** Files this pattern is tried on. */
  language: "javascript" | "python";
  regex: RegExp;
  /** The path when the match names none (the library's default). */
  fallback?: string;
}

/** A quoted path literal: '…', "…" or `…` (a JavaScript template without interpolation). */
const QUOTED = String.raw`(['"\x60])([^'"\x60\n]*)\1`;
const GRAPHQL_HANDLER = String.raw`(?:graphqlHTTP|graphqlHttp|createHandler|createYoga|yoga|expressMiddleware|koaMiddleware|graphqlExpress|graphqlKoa|graphqlHapi|apolloServer\w*|server\.getMiddleware|getMiddleware|graphqlUploadExpress|graphqlServer|gqlServer)`;

const PATTERNS: Pattern[] = [
  // app.use("/graphql", graphqlHTTP({...})), app.all("/graphql", createHandler(...)), router.post("/gql", expressMiddleware(server))
  {
    framework: "express-graphql",
    language: "javascript",
    regex: new RegExp(
      String.raw`\.(?:use|all|post|get)\s*\(\s*${QUOTED}\s*,[^;]{0,200}?\b${GRAPHQL_HANDLER}\b`,
      "g",
    ),
  },
  // server.applyMiddleware({ app, path: "/api/graphql" }) — Apollo Server 2/3; default /graphql
  {
    framework: "apollo-server",
    language: "javascript",
    regex: /\.applyMiddleware\s*\(\s*\{[^}]*?\bpath\s*:\s*(['"`])([^'"`\n]*)\1/g,
  },
  {
    framework: "apollo-server",
    language: "javascript",
    regex: /\.applyMiddleware\s*\(\s*\{(?![^}]*\bpath\s*:)/g,
    fallback: "/graphql",
  },
  // createYoga({ graphqlEndpoint: "/api/gql" }); default /graphql
  {
    framework: "graphql-yoga",
    language: "javascript",
    regex: /\bgraphqlEndpoint\s*:\s*(['"`])([^'"`\n]*)\1/g,
  },
  {
    framework: "graphql-yoga",
    language: "javascript",
    regex: /\bcreateYoga\s*\(\s*\{(?![^}]*\bgraphqlEndpoint\s*:)/g,
    fallback: "/graphql",
  },
  // app.register(mercurius, { path: "/gql" }); default /graphql
  {
    framework: "mercurius",
    language: "javascript",
    regex: /\bregister\s*\(\s*mercurius\s*,\s*\{[^}]*?\bpath\s*:\s*(['"`])([^'"`\n]*)\1/g,
  },
  {
    framework: "mercurius",
    language: "javascript",
    regex: /\bregister\s*\(\s*mercurius\b(?!\s*,\s*\{[^}]*\bpath\s*:)/g,
    fallback: "/graphql",
  },
  // GraphQLModule.forRoot({ path: "/api/graphql" }); default /graphql
  {
    framework: "nestjs-graphql",
    language: "javascript",
    regex:
      /GraphQLModule\.forRoot(?:Async)?\s*(?:<[^>]*>)?\s*\(\s*\{[^}]*?\bpath\s*:\s*(['"`])([^'"`\n]*)\1/g,
  },
  {
    framework: "nestjs-graphql",
    language: "javascript",
    regex: /GraphQLModule\.forRoot(?:Async)?\s*(?:<[^>]*>)?\s*\((?![^)]*\bpath\s*:)/g,
    fallback: "/graphql",
  },
  // startStandaloneServer(server) / new ApolloServer(...).listen(): every path answers; / is the documented one
  {
    framework: "apollo-server",
    language: "javascript",
    regex: /\bstartStandaloneServer\s*\(/g,
    fallback: "/",
  },
  // Flask: app.add_url_rule('/graphql', view_func=GraphQLView.as_view('graphql', schema=schema))
  {
    framework: "flask-graphql",
    language: "python",
    regex:
      /\.add_url_rule\s*\(\s*(['"])([^'"\n]*)\1[^)]*?view_func\s*=\s*[\w.]*\w+\.as_view\s*\((?=[^)]*\bschema\s*=|[^)]*graph)/gi,
  },
  {
    framework: "flask-graphql",
    language: "python",
    regex: /\.add_url_rule\s*\(\s*(['"])([^'"\n]*)\1[^)]*?view_func\s*=\s*[\w.]*GraphQL\w*/g,
  },
  // Django: path('graphql', GraphQLView.as_view(...)), re_path(r'^graphql/?$', csrf_exempt(GraphQLView.as_view(...)))
  {
    framework: "django-graphql",
    language: "python",
    regex:
      /\b(?:path|re_path|url)\s*\(\s*r?(['"])([^'"\n]*)\1\s*,\s*(?:csrf_exempt\s*\(\s*)?[\w.]*(?:GraphQL\w*View|AsyncGraphQLView)\b/g,
  },
  // Starlette / FastAPI: app.mount("/graphql", GraphQL(schema)), app.add_route("/graphql", GraphQLApp(...)),
  // app.include_router(graphql_app, prefix="/graphql")
  {
    framework: "asgi-graphql",
    language: "python",
    regex:
      /\.(?:mount|add_route|add_websocket_route)\s*\(\s*(['"])([^'"\n]*)\1\s*,\s*[\w.]*(?:GraphQL\w*|graphql_app)\b/g,
  },
  {
    framework: "asgi-graphql",
    language: "python",
    regex: /\.include_router\s*\(\s*\w*graph\w*\s*,[^)]*?\bprefix\s*=\s*(['"])([^'"\n]*)\1/gi,
  },
  // Any route declaration whose own path says GraphQL: @app.route("/graphql", methods=["POST"]) over graphql_sync(...)
  {
    framework: "route",
    language: "python",
    regex: /@\w+\.(?:route|post|get|api_route)\s*\(\s*(['"])([^'"\n]*(?:graphql|gql)[^'"\n]*)\1/gi,
  },
  {
    framework: "route",
    language: "javascript",
    regex: /\.(?:use|all|post|get|route)\s*\(\s*(['"`])(\/[^'"`\n]*(?:graphql|gql)[^'"`\n]*)\1/gi,
  },
];

const JAVASCRIPT = /\.(?:[cm]?[jt]sx?)$/;
const PYTHON = /\.py$/;
/** A file that never imports a GraphQL library holds no GraphQL endpoint. */
const MENTIONS_GRAPHQL = /graphql|graphene|strawberry|ariadne|apollo|mercurius|\bgql\b|yoga/i;

/** The GraphQL endpoints one source file mounts. */
export function endpointsInFile(relative: string, text: string): SourceEndpoint[] {
  const language = JAVASCRIPT.test(relative) ? "javascript" : PYTHON.test(relative) ? "python" : undefined;
  if (!language || !MENTIONS_GRAPHQL.test(text)) return [];
  const found = new Map<string, SourceEndpoint>();
  for (const pattern of PATTERNS) {
    if (pattern.language !== language) continue;
    for (const match of text.matchAll(pattern.regex)) {
      const raw = pattern.fallback ?? match[2];
      if (raw === undefined) continue;
      const path = normalizeEndpointPath(raw, pattern.framework);
      if (!path || found.has(path)) continue;
      found.set(path, {
        path,
        file: relative,
        line: lineOf(text, match.index ?? 0),
        framework: pattern.framework,
      });
    }
  }
  return [...found.values()];
}

/** `/graphql` from `graphql`, `^graphql/?$`, `/graphql/` or `/graphql/*`; undefined for what is no path. */
export function normalizeEndpointPath(raw: string, framework = ""): string | undefined {
  let path = raw.trim();
  if (framework === "django-graphql")
    path = path
      .replace(/^\^/, "")
      .replace(/\/?\??\$$/, "")
      .replace(/\\/g, "");
  path = path.replace(/\/\*+$/, "").replace(/\(\.\*\)$/, "");
  if (/[\s{}<>:*]/.test(path.replace(/\{[^}]+\}/g, ""))) return undefined;
  if (!path.startsWith("/")) path = `/${path}`;
  if (path.length > 1) path = path.replace(/\/+$/, "");
  return path;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let position = 0; position < index; position += 1) if (text.charCodeAt(position) === 10) line += 1;
  return line;
}
