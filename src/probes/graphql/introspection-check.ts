import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { endpointLocation, type GraphqlEndpoint, methodsFor, sendFor, stepOf } from "./finding-support.ts";
import { askGraphql } from "./graphql-transport.ts";

// Introspection open to anonymous callers. Not a defect by itself: a public API publishes its schema on
// purpose, so this is only reported when the profile does not say the API is public, and only when two
// different introspection fields (`__schema`, then `__type`) both answered without credentials.

const SCHEMA_QUERY = "query QaasIntrospection { __schema { queryType { name } types { name kind } } }";

export async function checkIntrospection(
  run: ProbeRun,
  endpoint: GraphqlEndpoint,
  options: { apiPublic: boolean },
): Promise<EnvelopeDraft | undefined> {
  if (options.apiPublic) return undefined;
  const send = sendFor(run, undefined);
  const methods = methodsFor(run);
  const first = await askGraphql(
    send,
    endpoint.url,
    { query: SCHEMA_QUERY, operationName: "QaasIntrospection" },
    methods,
  );
  const schema = (
    first?.answer?.data as { __schema?: { queryType?: { name?: string }; types?: unknown[] } } | null
  )?.__schema;
  const queryRoot = schema?.queryType?.name;
  if (!first || !Array.isArray(schema?.types) || schema.types.length === 0 || typeof queryRoot !== "string")
    return undefined;
  const typeQuery = `query QaasType { __type(name: ${JSON.stringify(queryRoot)}) { name fields { name } } }`;
  const second = await askGraphql(
    send,
    endpoint.url,
    { query: typeQuery, operationName: "QaasType" },
    methods,
  );
  const rootFields = (second?.answer?.data as { __type?: { fields?: Array<{ name: string }> } } | null)
    ?.__type?.fields;
  if (!second || !Array.isArray(rootFields) || rootFields.length === 0) return undefined;
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: `GraphQL introspection at ${endpoint.path} answers anonymous callers`,
    summary: `${first.method} ${endpoint.path} answered __schema (${schema.types.length} types, query root ${queryRoot}) without credentials, and __type(name: "${queryRoot}") listed its ${rootFields.length} root fields (${rootFields
      .slice(0, 8)
      .map((field) => field.name)
      .join(
        ", ",
      )}${rootFields.length > 8 ? ", …" : ""}). The target profile does not mark the API as public.`,
    impact:
      "Anyone can read the whole schema, including administrative, internal and undocumented operations and their arguments: a complete map of the attack surface.",
    location: endpointLocation(endpoint.path),
    severity: severityFor("misconfiguration"),
    confidence: 0.85,
    discriminator: "graphql-introspection",
    exchanges: [
      { label: "schema", exchange: first.exchange },
      { label: "type", exchange: second.exchange },
    ],
    repro: {
      title: `GraphQL introspection at ${endpoint.path} is closed to anonymous callers`,
      steps: [stepOf("schema", first.exchange)],
      assertions: [
        {
          kind: "body_not_matches",
          step: "schema",
          pattern: String.raw`"__schema"\s*:\s*\{`,
          message: "introspection must not answer an anonymous caller",
        },
      ],
    },
    suggestedFixArea: "the GraphQL server's options (disable introspection outside development)",
  });
}
