import type { DocumentNode, IntrospectionSchema } from "graphql";
import type { OperationCandidate } from "../../map/inventory.ts";
import type { Page, SystemMap } from "../../map/system-map.ts";
import { joinUrl } from "../http/target-url.ts";
import {
  type CandidatePath,
  discoverEndpoints,
  type EndpointProbe,
  isEndpoint,
} from "./discover-endpoints.ts";
import { graphqlDocumentsInText } from "./documents-in-text.ts";
import { graphqlPathsInMap, graphqlPathsInText } from "./frontend-endpoints.ts";
import { FrontendTexts, htmlPages, pageScripts } from "./frontend-texts.ts";
import type { GraphqlMethod, GraphqlSend } from "./graphql-transport.ts";
import { introspect } from "./introspect.ts";
import {
  documentFieldKeys,
  mappedAlready,
  rootFieldKeys,
  schemaFromOperations,
} from "./operations-schema.ts";
import { type GraphqlSourceScan, scanGraphqlSource } from "./scan-graphql-source.ts";
import { operationsFromSchema } from "./schema-operations.ts";
import type { SourceEndpoint } from "./source-endpoints.ts";

// MAPPER's GraphQL reader: endpoints from the source, the frontend and the usual paths; each endpoint's
// schema by introspection, else from the SDL in the source, else from the operations the frontend (or
// client code in the source) sends, shaped by the server's validation errors; every root field one
// operation.

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
  /** HTML pages read for the frontend's operations when no schema can be read otherwise. */
  maxPages?: number;
}

type SchemaSource = "introspection" | "sdl" | "operations" | "none";

export interface GraphqlEndpointSummary {
  path: string;
  found_by: string;
  answered_as?: string;
  method?: GraphqlMethod;
  schema_from: SchemaSource;
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
const DEFAULT_MAX_PAGES = 15;

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
    from: SchemaSource,
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
    const frontend = new FrontendTexts(input.live.sendAs(undefined), input.live.baseUrl);
    const candidates = await candidatePaths(input, scan, frontend);
    let documents: DocumentNode[] | undefined;
    mapping.probes = await discoverEndpoints(candidates, {
      baseUrl: input.live.baseUrl,
      sendAs: input.live.sendAs,
      users: input.live.users,
      methods: input.live.methods,
    });
    const answered = [];
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
      answered.push({ probe, methods, outcome });
    }
    // Endpoints with a schema first: one refusing introspection may be another door to the same API.
    answered.sort((a, b) => Number(!(a.outcome.schema ?? sdl)) - Number(!(b.outcome.schema ?? sdl)));
    for (const { probe, methods, outcome } of answered) {
      let schema = outcome.schema ?? sdl;
      let from: SchemaSource = outcome.schema ? "introspection" : sdl ? "sdl" : "none";
      let twin: string | undefined;
      if (!schema) {
        documents ??= [...(scan?.documents ?? []), ...(await frontendDocuments(input, frontend))];
        twin = mappedAlready(documentFieldKeys(documents), mapping.graphql);
        schema = twin
          ? undefined
          : await schemaFromOperations(documents, notes, probe.path, {
              send: input.live.sendAs(probe.user),
              url: joinUrl(input.live.baseUrl, probe.path),
              methods,
            });
        // What the server's suggestions added may show the same API as an endpoint already mapped.
        twin ??= schema ? mappedAlready(rootFieldKeys(schema), mapping.graphql) : undefined;
        if (twin) schema = undefined;
        if (schema || twin) from = "operations";
      }
      if (twin)
        notes.push(
          `${probe.path} refuses introspection, but the operations the frontend sends are fields of ${twin}'s schema: mapped once, at ${twin}`,
        );
      else if (from === "none")
        notes.push(
          `${probe.path} answers GraphQL but its schema could not be read (introspection refused, no SDL in the source, no operation in the frontend)`,
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
          ...(twin ? { same_as: twin } : {}),
        },
        sourceEndpointAt(probe.path),
        probe.user ? "required" : undefined,
      );
    }
  }

  const fromSource = scan?.endpoints ?? [];
  const path = fromSource[0]?.path ?? "/graphql";
  const offline =
    mapping.endpoints.length > 0
      ? undefined
      : sdl
        ? { schema: sdl, from: "SDL" as const }
        : !input.live && scan && scan.documents.length > 0
          ? {
              schema: await schemaFromOperations(scan.documents, notes, path),
              from: "client operations" as const,
            }
          : undefined;
  if (offline?.schema) {
    if (fromSource.length === 0)
      notes.push(`GraphQL ${offline.from} found in the source but no endpoint mounting it: /graphql assumed`);
    else if (input.live)
      notes.push(
        `${path} (from the source) did not answer GraphQL live: operations taken from the ${offline.from}`,
      );
    record(
      path,
      offline.schema,
      offline.from === "SDL" ? "sdl" : "operations",
      { found_by: fromSource[0] ? "source" : "assumed" },
      fromSource[0],
    );
  }
  if (mapping.endpoints.length === 0) notes.push("no GraphQL endpoint found (source, frontend, usual paths)");
  return mapping;
}

/** Paths to try, most trusted first: the caller's, the source's, then what the map and the frontend name. */
async function candidatePaths(
  input: GraphqlMappingInput,
  scan: GraphqlSourceScan | undefined,
  frontend: FrontendTexts | undefined,
): Promise<CandidatePath[]> {
  const list: CandidatePath[] = [];
  const add = (path: string, origin: CandidatePath["origin"]) => {
    if (!list.some((entry) => entry.path === path)) list.push({ path, origin });
  };
  for (const path of input.givenPaths ?? []) add(path.startsWith("/") ? path : `/${path}`, "given");
  for (const endpoint of scan?.endpoints ?? []) add(endpoint.path, "source");
  for (const path of graphqlPathsInMap(input.knownPaths ?? [], input.pages ?? [])) add(path, "frontend");
  const live = input.live;
  if (!live || !frontend) return list;
  for (const script of pageScripts(input.pages ?? [], input.maxScripts ?? DEFAULT_MAX_SCRIPTS))
    for (const path of graphqlPathsInText(await frontend.read(script), live.baseUrl)) add(path, "frontend");
  return list;
}

/** The operations the served pages and their scripts send. */
async function frontendDocuments(
  input: GraphqlMappingInput,
  frontend: FrontendTexts,
): Promise<DocumentNode[]> {
  const pages = input.pages ?? [];
  const urls = [
    ...htmlPages(pages, input.maxPages ?? DEFAULT_MAX_PAGES),
    ...pageScripts(pages, input.maxScripts ?? DEFAULT_MAX_SCRIPTS),
  ];
  const documents: DocumentNode[] = [];
  for (const url of urls) documents.push(...graphqlDocumentsInText(await frontend.read(url)));
  return documents;
}

/** Two endpoints serve the same schema when their root fields are the same. */
function schemaKey(schema: IntrospectionSchema): string {
  return rootFieldKeys(schema).sort().join("|");
}
