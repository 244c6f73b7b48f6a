import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { endpointLocation, type GraphqlEndpoint, methodsFor, sendFor, stepOf } from "./finding-support.ts";
import { askGraphql, type GraphqlAsked } from "./graphql-transport.ts";

// Query overloading inside one document, which a batch limit does not see: many aliases of one field (each
// alias runs the resolver again: a sign-in or a costly field a hundred times per request) and one field
// repeated many times (every copy parsed and validated). Probed the way graphql-cop does, with
// `__typename` only, so no resolver runs: a small document, then one well past any sane cap (a cost or
// alias limit usually sits far below it). Both must be executed whole.

export interface OverloadShape {
  kind: "aliases" | "duplication";
  discriminator: string;
  small: number;
  large: number;
  document(size: number): string;
  /** Whether the answer executed the whole document. */
  executed(data: unknown, size: number): boolean;
}

export const ALIAS_OVERLOADING: OverloadShape = {
  kind: "aliases",
  discriminator: "graphql-alias-overloading",
  small: 10,
  large: 101,
  document: (size) =>
    `query QaasAliases { ${Array.from({ length: size }, (_, index) => `q${index + 1}: __typename`).join(" ")} }`,
  executed: (data, size) => {
    const record = data && typeof data === "object" ? (data as Record<string, unknown>) : {};
    return Array.from({ length: size }, (_, index) => record[`q${index + 1}`]).every(
      (value) => typeof value === "string",
    );
  },
};

export const FIELD_DUPLICATION: OverloadShape = {
  kind: "duplication",
  discriminator: "graphql-field-duplication",
  small: 10,
  large: 500,
  document: (size) => `query QaasDuplicates { ${Array(size).fill("__typename").join(" ")} }`,
  executed: (data) => typeof (data as { __typename?: unknown } | null | undefined)?.__typename === "string",
};

export async function checkOverloading(
  run: ProbeRun,
  endpoint: GraphqlEndpoint,
  shape: OverloadShape,
): Promise<EnvelopeDraft | undefined> {
  const small = await ask(run, endpoint, shape, shape.small);
  if (!small) return undefined;
  const large = await ask(run, endpoint, shape, shape.large);
  if (!large) return undefined;
  const aliases = shape.kind === "aliases";
  const what = aliases
    ? `${shape.large} aliases of one field`
    : `the same field repeated ${shape.large} times`;
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: aliases
      ? `GraphQL endpoint ${endpoint.path} executes ${shape.large} aliases in one query (no alias limit)`
      : `GraphQL endpoint ${endpoint.path} executes a field duplicated ${shape.large} times (no query cost limit)`,
    summary: `${large.method} ${endpoint.path} executed a query of ${what} without any error, as it did one of ${shape.small} (every field was __typename, so no resolver ran).`,
    impact: aliases
      ? "One request can run any resolver hundreds of times under different aliases: sign-in and one-time-code guesses bypass per-request rate limits, and a costly field multiplies the server's work (denial of service)."
      : "The server parses, validates and resolves every duplicate: one small request multiplies its work, and nothing bounds a query's size or cost (denial of service).",
    location: endpointLocation(endpoint.path),
    severity: severityFor("misconfiguration"),
    confidence: 0.8,
    discriminator: shape.discriminator,
    exchanges: [
      { label: `${shape.kind}-${shape.small}`, exchange: small.exchange },
      { label: `${shape.kind}-${shape.large}`, exchange: large.exchange },
    ],
    repro: {
      title: aliases
        ? `GraphQL endpoint ${endpoint.path} refuses a query with ${shape.large} aliases`
        : `GraphQL endpoint ${endpoint.path} refuses a field duplicated ${shape.large} times`,
      steps: [stepOf("overloaded", large.exchange)],
      assertions: [
        {
          kind: "json_has",
          step: "overloaded",
          path: "errors",
          message: `a query of ${what} must be refused by an alias, duplication or cost limit`,
        },
      ],
    },
    suggestedFixArea:
      "the GraphQL server's validation rules (limit aliases, duplicated fields and query cost or size)",
  });
}

async function ask(
  run: ProbeRun,
  endpoint: GraphqlEndpoint,
  shape: OverloadShape,
  size: number,
): Promise<GraphqlAsked | undefined> {
  const query = shape.document(size);
  const operationName = shape.kind === "aliases" ? "QaasAliases" : "QaasDuplicates";
  const asked = await askGraphql(
    sendFor(run, undefined),
    endpoint.url,
    { query, operationName },
    methodsFor(run),
  );
  const answer = asked?.answer;
  if (!asked || !answer || answer.failed || !shape.executed(answer.data, size)) return undefined;
  return asked;
}
