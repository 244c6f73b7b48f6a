import type { DocumentNode, IntrospectionSchema } from "graphql";
import { discoverRootFields } from "./discover-fields.ts";
import { rootFields, sdlOfShapes, shapesFromDocuments } from "./document-shapes.ts";
import type { GraphqlMethod, GraphqlSend } from "./graphql-transport.ts";
import type { GraphqlMapping } from "./map-graphql.ts";
import { probeShapes } from "./probe-shapes.ts";
import { schemaFromSdl } from "./sdl-schema.ts";
import { fieldsOf, rootTypeNames, typeIndex } from "./type-refs.ts";

// A schema for an endpoint that refuses introspection: the root fields, arguments and selections of the
// client operations the application sends, then — where the endpoint is live — the fields its suggestions
// give away, and each root field described by its validation errors (nothing runs: see probe-shapes.ts).

export interface LiveEndpoint {
  send: GraphqlSend;
  url: string;
  methods: readonly GraphqlMethod[];
}

export async function schemaFromOperations(
  documents: readonly DocumentNode[],
  notes: string[],
  path: string,
  live?: LiveEndpoint,
): Promise<IntrospectionSchema | undefined> {
  const shapes = shapesFromDocuments(documents);
  const fromDocuments = rootFields(shapes).length;
  const said: string[] = [];
  if (live) {
    const discovery = await discoverRootFields(live.send, live.url, live.methods, shapes);
    if (discovery.found.length > 0)
      said.push(
        `${discovery.found.length} more the server confirmed or suggested when asked for likely names, in ${discovery.requests} requests (${discovery.found.join(", ")})`,
      );
  }
  const fields = rootFields(shapes).length;
  if (fields === 0) return undefined;
  if (live) {
    const probed = await probeShapes(live.send, live.url, live.methods, shapes);
    said.push(
      `the server's validation errors described ${probed.described} of ${fields} in ${probed.requests} requests`,
    );
    if (probed.dropped.length > 0)
      said.push(`${probed.dropped.length} it does not have were dropped (${probed.dropped.join(", ")})`);
    if (probed.executed)
      said.push(
        `the server ran ${probed.executed} although its document could not be valid, so no more were asked`,
      );
  }
  const built = schemaFromSdl([{ origin: "operations", text: sdlOfShapes(shapes) }], notes);
  if (built)
    notes.push(
      `${path}: schema sketched without introspection: ${fromDocuments} root fields from ${documents.length} GraphQL documents the application sends${said.length > 0 ? `; ${said.join("; ")}` : ""}`,
    );
  return built?.schema;
}

/**
 * The endpoint whose schema already holds (nearly) every root field named (`query:pastes`); a few may be
 * gone from the API (a stale frontend, a page quoting attacks).
 */
export function mappedAlready(
  used: readonly string[],
  mapped: GraphqlMapping["graphql"],
): string | undefined {
  if (used.length === 0) return undefined;
  for (const entry of mapped) {
    const held = new Set(rootFieldKeys(entry.schema as unknown as IntrospectionSchema));
    if (used.filter((field) => held.has(field)).length >= Math.ceil(used.length * 0.8)) return entry.path;
  }
  return undefined;
}

/** `query:pastes`, `mutation:createPaste`, … of the documents' operations. */
export function documentFieldKeys(documents: readonly DocumentNode[]): string[] {
  return rootFields(shapesFromDocuments(documents)).map(({ kind, field }) => `${kind}:${field.name}`);
}

/** `query:pastes`, `mutation:createPaste`, … of a schema. */
export function rootFieldKeys(schema: IntrospectionSchema): string[] {
  const types = typeIndex(schema);
  const roots = rootTypeNames(schema);
  return (["query", "mutation", "subscription"] as const).flatMap((kind) => {
    const name = roots[kind];
    return fieldsOf(name ? types.get(name) : undefined).map((field) => `${kind}:${field.name}`);
  });
}
