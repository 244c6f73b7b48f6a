import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { buildFinding } from "../evidence/finding.ts";
import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import { severityFor } from "../severity.ts";
import { endpointLocation, type GraphqlEndpoint, stepOf } from "./finding-support.ts";
import { answerOf } from "./graphql-answer.ts";
import { postSpec } from "./graphql-transport.ts";

// Batching without a limit: a JSON array of operations executed in one request lets one HTTP request
// carry many sign-in or code guesses past per-request rate limits. Probed with `__typename` only (no
// resolver runs): a batch of 3 must be executed whole, then a batch of 10 too — a server that caps
// batches usually caps well below that.

const FIRST_BATCH = 3;
const SECOND_BATCH = 10;

export async function checkBatching(
  run: ProbeRun,
  endpoint: GraphqlEndpoint,
): Promise<EnvelopeDraft | undefined> {
  // An array body only travels by POST; where the write policy refuses POST there is nothing to try.
  if (!run.target.writesAllowed) return undefined;
  const first = await sendBatch(run, endpoint, FIRST_BATCH);
  if (!first) return undefined;
  const second = await sendBatch(run, endpoint, SECOND_BATCH);
  if (!second) return undefined;
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: `GraphQL endpoint ${endpoint.path} executes batched operations without a limit`,
    summary: `POST ${endpoint.path} with a JSON array of ${FIRST_BATCH} operations answered all ${FIRST_BATCH}, and an array of ${SECOND_BATCH} answered all ${SECOND_BATCH}, in one request each (each operation only asked for __typename).`,
    impact:
      "One request carries any number of operations: rate limits and lockouts counted per request (sign-in, one-time codes, coupons) are bypassed, and the work one request causes is unbounded.",
    location: endpointLocation(endpoint.path),
    severity: severityFor("misconfiguration"),
    confidence: 0.85,
    discriminator: "graphql-batching",
    exchanges: [
      { label: `batch-${FIRST_BATCH}`, exchange: first },
      { label: `batch-${SECOND_BATCH}`, exchange: second },
    ],
    repro: {
      title: `GraphQL endpoint ${endpoint.path} refuses or caps batches of ${SECOND_BATCH} operations`,
      steps: [stepOf("batch", second)],
      assertions: [
        {
          kind: "body_not_matches",
          step: "batch",
          pattern: String.raw`"a${SECOND_BATCH}"\s*:\s*"`,
          message: `a batch of ${SECOND_BATCH} operations must not all be executed`,
        },
      ],
    },
    suggestedFixArea: "the GraphQL server's batching option (disable it, or cap the batch size)",
  });
}

/** The exchange when every operation of the batch was executed and answered its own alias. */
async function sendBatch(
  run: ProbeRun,
  endpoint: GraphqlEndpoint,
  size: number,
): Promise<HttpExchange | undefined> {
  const batch = Array.from({ length: size }, (_, index) => ({
    query: `query QaasBatch${index + 1} { a${index + 1}: __typename }`,
    operationName: `QaasBatch${index + 1}`,
  }));
  const exchange = await send(run, undefined, postSpec(endpoint.url, batch));
  const json = exchange?.response?.json;
  if (!exchange || !Array.isArray(json) || json.length !== size) return undefined;
  const executed = json.every((item, index) => {
    const data = answerOf(item)?.data as Record<string, unknown> | null | undefined;
    return typeof data?.[`a${index + 1}`] === "string";
  });
  return executed ? exchange : undefined;
}
