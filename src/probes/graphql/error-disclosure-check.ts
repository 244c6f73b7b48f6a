import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { endpointLocation, type GraphqlEndpoint, methodsFor, sendFor, stepOf } from "./finding-support.ts";
import { askGraphql, type GraphqlAsked } from "./graphql-transport.ts";

// Stack traces in GraphQL errors: servers left in debug mode put the exception's frames into each error
// (Apollo's `extensions.exception.stacktrace`, graphql-php's `trace`, a Python `traceback` in an
// extension, a Java or .NET trace in the message). Provoked without running any resolver: a field the
// schema lacks (a validation error), then a document that does not parse (a syntax error). Both answers
// must carry frames of source files: two different errors, the same leak.

/**
 * One frame of a stack trace as it reads inside a JSON body (quotes may be escaped): a Python
 * `File "x.py", line 3`, a Node `x.js:3:7`, a Java `X.java:3)`, a .NET `x.cs:line 3`, PHP `x.php(3)`,
 * Ruby `x.rb:3:in`, Go `x.go:3 +0x`.
 */
const FRAME =
  /[\w-]*\.py\\?"?, line \d+|[\w-]*\.(?:[cm]?js|[jt]sx?):\d+:\d+|[\w$-]*\.(?:java|kt|scala):\d+\)|[\w-]*\.cs:line \d+|[\w-]*\.php(?:\(\d+\)|:\d+)|[\w-]*\.rb:\d+:in\b|[\w-]*\.go:\d+ \+0x/g;
const MIN_FRAMES = 2;

const PROVOCATIONS = [
  { label: "unknown-field", query: "query QaasErrors { qaasNoSuchField }" },
  { label: "syntax-error", query: "query QaasErrors { __typename(" },
] as const;

export function framesIn(errors: unknown): string[] {
  const text = JSON.stringify(errors ?? []);
  return [...text.matchAll(FRAME)].map((match) => match[0].replace(/\\?"/g, ""));
}

export async function checkErrorDisclosure(
  run: ProbeRun,
  endpoint: GraphqlEndpoint,
): Promise<EnvelopeDraft | undefined> {
  const hits: Array<{ asked: GraphqlAsked; label: string; frames: string[] }> = [];
  for (const provocation of PROVOCATIONS) {
    const asked = await askGraphql(
      sendFor(run, undefined),
      endpoint.url,
      { query: provocation.query, operationName: "QaasErrors" },
      methodsFor(run),
    );
    const frames = framesIn(asked?.answer?.errors);
    if (!asked || frames.length < MIN_FRAMES) return undefined;
    hits.push({ asked, label: provocation.label, frames });
  }
  const [first, second] = hits as [(typeof hits)[number], (typeof hits)[number]];
  const sample = [...new Set(first.frames)].slice(0, 3).join(", ");
  return buildFinding(run, {
    domain: "security",
    defectClass: "sensitive-data-exposure",
    title: `GraphQL errors at ${endpoint.path} carry server stack traces`,
    summary: `Querying a field the schema lacks at ${endpoint.path} answered an error carrying ${first.frames.length} stack frames of the server's source (${sample}), and a query that does not parse answered ${second.frames.length} more: the server formats errors in debug mode.`,
    impact:
      "Every error tells an attacker the server's file layout, framework, library versions and code paths, which guides further attacks; resolver errors can carry data too.",
    location: endpointLocation(endpoint.path),
    severity: severityFor("sensitive-data-exposure", { exposure: "internal" }),
    confidence: 0.85,
    discriminator: "graphql-stack-trace",
    exchanges: [
      { label: first.label, exchange: first.asked.exchange },
      { label: second.label, exchange: second.asked.exchange },
    ],
    repro: {
      title: `GraphQL errors at ${endpoint.path} carry no stack trace`,
      steps: [stepOf("error", first.asked.exchange)],
      assertions: [
        {
          kind: "body_not_matches",
          step: "error",
          pattern: `(?:${FRAME.source})[\\s\\S]*(?:${FRAME.source})`,
          message: "a GraphQL error must not carry the server's stack frames",
        },
      ],
    },
    suggestedFixArea:
      "the GraphQL server's error formatting (no stack traces or debug extensions in production)",
  });
}
