import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { endpointLocation, type GraphqlEndpoint, methodsFor, sendFor, stepOf } from "./finding-support.ts";
import { askGraphql, type GraphqlAsked } from "./graphql-transport.ts";
import { fieldsOf, rootTypeNames, typeIndex } from "./type-refs.ts";

// Field suggestions: a mistyped field answered with `Did you mean "…"?` names real fields, which rebuilds
// the schema name by name even where introspection is off. Two different misspellings must each be
// answered with the real name they were made from.

const SUGGESTION = /did you mean/i;

export async function checkFieldSuggestions(
  run: ProbeRun,
  endpoint: GraphqlEndpoint,
  options: { apiPublic: boolean },
): Promise<EnvelopeDraft | undefined> {
  if (options.apiPublic || !endpoint.schema) return undefined;
  const types = typeIndex(endpoint.schema);
  const root = rootTypeNames(endpoint.schema).query;
  const names = fieldsOf(root ? types.get(root) : undefined)
    .map((field) => field.name)
    .filter((name) => !name.startsWith("__") && name.length >= 4);
  const typos = misspellings(names);
  if (typos.length < 2) return undefined;
  const send = sendFor(run, undefined);
  const hits: Array<{ asked: GraphqlAsked; typo: string; real: string }> = [];
  for (const { typo, real } of typos) {
    const asked = await askGraphql(
      send,
      endpoint.url,
      { query: `query QaasTypo { ${typo} }`, operationName: "QaasTypo" },
      methodsFor(run),
    );
    const message = asked?.answer?.errors.map((error) => error.message).find((text) => SUGGESTION.test(text));
    if (!asked || !message?.includes(real)) return undefined;
    hits.push({ asked, typo, real });
  }
  const [first, second] = hits as [(typeof hits)[number], (typeof hits)[number]];
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: `GraphQL errors at ${endpoint.path} suggest real field names ("Did you mean")`,
    summary: `Querying the misspelled fields ${first.typo} and ${second.typo} at ${endpoint.path} answered "Did you mean" with the real fields ${first.real} and ${second.real}.`,
    impact:
      "The schema can be recovered name by name from suggestions (tools automate it), even where introspection is disabled.",
    location: endpointLocation(endpoint.path),
    severity: severityFor("misconfiguration"),
    confidence: 0.85,
    discriminator: "graphql-field-suggestions",
    exchanges: [
      { label: "typo-1", exchange: first.asked.exchange },
      { label: "typo-2", exchange: second.asked.exchange },
    ],
    repro: {
      title: `GraphQL errors at ${endpoint.path} do not suggest field names`,
      steps: [stepOf("typo", first.asked.exchange)],
      assertions: [
        {
          kind: "body_not_matches",
          step: "typo",
          pattern: "did you mean",
          flags: "i",
          message: "an error for an unknown field must not name real fields",
        },
      ],
    },
    suggestedFixArea: "the GraphQL server's error formatting (strip suggestions in production)",
  });
}

/** Two misspellings of different real fields (a doubled last letter), never colliding with a real name. */
function misspellings(names: readonly string[]): Array<{ typo: string; real: string }> {
  const known = new Set(names);
  const typos: Array<{ typo: string; real: string }> = [];
  for (const real of names) {
    const typo = `${real}${real.at(-1)}`;
    if (known.has(typo)) continue;
    typos.push({ typo, real });
    if (typos.length === 2) break;
  }
  return typos;
}
