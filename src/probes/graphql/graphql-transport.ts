import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import { type GraphqlAnswer, graphqlAnswer } from "./graphql-answer.ts";

// Sending one GraphQL document: POST with a JSON body (what every server accepts), else GET with
// `?query=` (servers that only take GET, and targets whose write policy refuses POST). The caller's send
// function carries the budget, the session and the write policy; it answers undefined for a refused write.

export type GraphqlSend = (spec: HttpRequestSpec) => Promise<HttpExchange | undefined>;

export interface GraphqlPayload {
  query: string;
  variables?: unknown;
  operationName?: string;
}

export type GraphqlMethod = "POST" | "GET";

export interface GraphqlAsked {
  method: GraphqlMethod;
  exchange: HttpExchange;
  /** Undefined when the body was not a GraphQL answer. */
  answer: GraphqlAnswer | undefined;
}

const ACCEPT = "application/graphql-response+json, application/json;q=0.9, */*;q=0.5";

export function postSpec(url: string, body: unknown, headers: Record<string, string> = {}): HttpRequestSpec {
  return {
    method: "POST",
    url,
    headers: { accept: ACCEPT, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  };
}

export function getSpec(
  url: string,
  payload: GraphqlPayload,
  headers: Record<string, string> = {},
): HttpRequestSpec {
  const target = new URL(url);
  target.searchParams.set("query", payload.query);
  if (payload.operationName) target.searchParams.set("operationName", payload.operationName);
  const variables = payload.variables;
  if (variables && typeof variables === "object" && Object.keys(variables).length > 0)
    target.searchParams.set("variables", JSON.stringify(variables));
  // Apollo Server's CSRF prevention refuses a GET without a header a simple form cannot send.
  return {
    method: "GET",
    url: target.toString(),
    headers: { accept: ACCEPT, "apollo-require-preflight": "true", ...headers },
  };
}

/**
 * Asks `url` the payload by each method in turn and answers the first GraphQL answer; when none came, the
 * last exchange (so the caller can say what the endpoint did answer), or undefined when nothing was sent.
 */
export async function askGraphql(
  send: GraphqlSend,
  url: string,
  payload: GraphqlPayload,
  methods: readonly GraphqlMethod[] = ["POST", "GET"],
): Promise<GraphqlAsked | undefined> {
  let last: GraphqlAsked | undefined;
  for (const method of methods) {
    const exchange = await send(method === "POST" ? postSpec(url, payload) : getSpec(url, payload));
    if (!exchange) continue;
    const answer = graphqlAnswer(exchange);
    last = { method, exchange, answer };
    if (answer && !refusesMethod(exchange, answer)) return last;
  }
  return last;
}

/** An answer that only says this method is not the way in (405, "must be POST", "must provide query"). */
function refusesMethod(exchange: HttpExchange, answer: GraphqlAnswer): boolean {
  if (exchange.response?.status === 405) return true;
  if (answer.data !== undefined && answer.data !== null) return false;
  return answer.errors.some((error) =>
    /only (?:supports?|allow(?:s|ed)?|accept(?:s|ed)?)\b.*\b(?:get|post)|must (?:be|use) (?:a )?(?:get|post)|method not allowed|must provide (?:a )?query|no query (?:string|document)|content-type/i.test(
      error.message,
    ),
  );
}
