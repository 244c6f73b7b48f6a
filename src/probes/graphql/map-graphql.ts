import type { IntrospectionSchema } from "graphql";
import type { OperationCandidate } from "../../map/inventory.ts";
import type { Page, SystemMap } from "../../map/system-map.ts";
import { joinUrl } from "../http/target-url.ts";
import {
  type CandidatePath,
  discoverEndpoints,
  type EndpointProbe,
  isEndpoint,
} from "./discover-endpoints.ts";
import { graphqlPathsInMap, graphqlPathsInText, pageScripts } from "./frontend-endpoints.ts";
import type { GraphqlMethod, GraphqlSend } from "./graphql-transport.ts";
import { introspect } from "./introspect.ts";
import { type GraphqlSourceScan, scanGraphqlSource } from "./scan-graphql-source.ts";
import { operationsFromSchema } from "./schema-operations.ts";
import type { SourceEndpoint } from "./source-endpoints.ts";
import { fieldsOf, rootTypeNames, typeIndex } from "./type-refs.ts";

// MAPPER's GraphQL reader: endpoints from the source, the frontend and the usual paths; each endpoint's
// schema by introspection, else from the SDL in the source; every root field one operation.

export interface GraphqlLive {
  baseUrl: string;
  sendAs: (user: string | undefined) => GraphqlSend;
  /** Users to try when an endpoint refuses anonymous callers, least privileged first. */
  users: readonly string[];
  /** `["GET"]` where the write policy refuses POST. */
  methods: readonly GraphqlMethod[];
}

export interface GraphqlMappingInput {
  root?: string;
  /** Absolute paths no scan may read (the golden ledger). */
  exclude?: string[];
  live?: GraphqlLive;
  pages?: readonly Page[];
  /** Paths of operations and routes the map already holds. */
  knownPaths?: Iterable<string>;
  /** Paths the caller asks to try first. */
  givenPaths?: readonly string[];
  maxScripts?: number;
}

export interface GraphqlEndpointSummary {
  path: string;
  found_by: string;
  answered_as?: string;
  method?: GraphqlMethod;
  schema_from: "introspection" | "sdl" | "none";
  introspection?: string;
  operations: number;
  /** Another endpoint serves the same schema: its operations are not repeated here. */
  same_as?: string;
}

export interface GraphqlMapping {
  graphql: SystemMap["graphql"];
  candidates: OperationCandidate[];
  endpoints: GraphqlEndpointSummary[];
  probes: EndpointProbe[];
  notes: string[];
  source: Pick<GraphqlSourceScan, "files" | "endpoints"> & { sdl_from: string[] };
}

const DEFAULT_MAX_SCRIPTS = 8;

export async function mapGraphql(input: GraphqlMappingInput): Promise<GraphqlMapping> {
  const notes: string[] = [];
  const scan = input.root ? scanGraphqlSource(input.root, { exclude: input.exclude }) : undefined;
  if (scan) notes.push(...scan.notes);
  const sdl = scan?.sdl?.schema;
  const mapping: GraphqlMapping = {
    graphql: [],
    candidates: [],
    endpoints: [],
    probes: [],
    notes,
    source: { files: scan?.files ?? 0, endpoints: scan?.endpoints ?? [], sdl_from: scan?.sdl?.used ?? [] },
  };
  const seenSchemas = new Map<string, string>();
  const record = (
    path: string,
    schema: IntrospectionSchema | undefined,
    from: "introspection" | "sdl" | "none",
    extra: Omit<GraphqlEndpointSummary, "path" | "schema_from" | "operations">,
    sourceEndpoint: SourceEndpoint | undefined,
    security?: OperationCandidate["security"],
  ) => {
    const summary: GraphqlEndpointSummary = { path, schema_from: from, operations: 0, ...extra };
    mapping.endpoints.push(summary);
    if (!schema || from === "none") return;
    mapping.graphql.push({ path, source: from, schema: schema as unknown as Record<string, unknown> });
    const key = schemaKey(schema);
    const twin = seenSchemas.get(key);
    if (twin) {
      summary.same_as = twin;
      notes.push(
        `GraphQL endpoint ${path} serves the same schema as ${twin}: its operations are mapped once, at ${twin}`,
      );
      return;
    }
    seenSchemas.set(key, path);
    const operations = operationsFromSchema(schema, path).map((candidate) => ({
      ...candidate,
      ...(sourceEndpoint
        ? {
            handler: {
              file: sourceEndpoint.file,
              line: sourceEndpoint.line,
              framework: sourceEndpoint.framework,
            },
          }
        : {}),
      ...(security ? { security } : {}),
    }));
    summary.operations = operations.length;
    mapping.candidates.push(...operations);
  };
  const sourceEndpointAt = (path: string) => scan?.endpoints.find((endpoint) => endpoint.path === path);

  if (input.live) {
    const candidates = await candidatePaths(input, scan);
    mapping.probes = await discoverEndpoints(candidates, {
      baseUrl: input.live.baseUrl,
      sendAs: input.live.sendAs,
      users: input.live.users,
      methods: input.live.methods,
    });
    for (const probe of mapping.probes.filter(isEndpoint)) {
      const methods = probe.method
        ? [probe.method, ...input.live.methods.filter((method) => method !== probe.method)]
        : input.live.methods;
      const outcome = await introspect(
        input.live.sendAs(probe.user),
        joinUrl(input.live.baseUrl, probe.path),
        methods,
      );
      notes.push(...outcome.notes.map((note) => `${probe.path}: ${note}`));
      const schema = outcome.schema ?? sdl;
      const from = outcome.schema ? "introspection" : sdl ? "sdl" : "none";
      if (from === "none")
        notes.push(
          `${probe.path} answers GraphQL but its schema could not be read (introspection refused, no SDL in the source)`,
        );
      record(
        probe.path,
        schema,
        from,
        {
          found_by: probe.origin,
          answered_as: probe.user ?? "anonymous",
          method: probe.method,
          introspection:
            outcome.how === "refused"
              ? `refused: ${outcome.refusal}`
              : outcome.partial
                ? `${outcome.how} (partial)`
                : outcome.how,
        },
        sourceEndpointAt(probe.path),
        probe.user ? "required" : undefined,
      );
    }
  }

  if (mapping.endpoints.length === 0 && sdl) {
    const fromSource = scan?.endpoints ?? [];
    const path = fromSource[0]?.path ?? "/graphql";
    if (fromSource.length === 0)
      notes.push("GraphQL SDL found in the source but no endpoint mounting it: /graphql assumed");
    else if (input.live)
      notes.push(`${path} (from the source) did not answer GraphQL live: operations taken from the SDL`);
    record(path, sdl, "sdl", { found_by: fromSource[0] ? "source" : "assumed" }, fromSource[0]);
  }
  if (mapping.endpoints.length === 0) notes.push("no GraphQL endpoint found (source, frontend, usual paths)");
  return mapping;
}

/** Paths to try, most trusted first: the caller's, the source's, then what the map and the frontend name. */
async function candidatePaths(
  input: GraphqlMappingInput,
  scan: GraphqlSourceScan | undefined,
): Promise<CandidatePath[]> {
  const list: CandidatePath[] = [];
  const add = (path: string, origin: CandidatePath["origin"]) => {
    if (!list.some((entry) => entry.path === path)) list.push({ path, origin });
  };
  for (const path of input.givenPaths ?? []) add(path.startsWith("/") ? path : `/${path}`, "given");
  for (const endpoint of scan?.endpoints ?? []) add(endpoint.path, "source");
  for (const path of graphqlPathsInMap(input.knownPaths ?? [], input.pages ?? [])) add(path, "frontend");
  const live = input.live;
  if (!live) return list;
  const send = live.sendAs(undefined);
  for (const script of pageScripts(input.pages ?? [], input.maxScripts ?? DEFAULT_MAX_SCRIPTS)) {
    const url = scriptUrl(script, live.baseUrl);
    if (!url) continue;
    const exchange = await send({ method: "GET", url, headers: { accept: "*/*" } });
    const body = exchange?.response?.status === 200 ? exchange.response.body : "";
    for (const path of graphqlPathsInText(body, live.baseUrl)) add(path, "frontend");
  }
  return list;
}

/** A script of the target's origin as an absolute URL; another origin's script is not the target's to read. */
function scriptUrl(script: string, baseUrl: string): string | undefined {
  if (!/^https?:\/\//i.test(script)) return joinUrl(baseUrl, script);
  return new URL(script).origin === new URL(baseUrl).origin ? script : undefined;
}

/** Two endpoints serve the same schema when their root fields are the same. */
function schemaKey(schema: IntrospectionSchema): string {
  const types = typeIndex(schema);
  const roots = rootTypeNames(schema);
  return (["query", "mutation", "subscription"] as const)
    .map((kind) => {
      const name = roots[kind];
      return `${kind}:${fieldsOf(name ? types.get(name) : undefined)
        .map((field) => field.name)
        .sort()
        .join(",")}`;
    })
    .join("|");
}
