import type { IntrospectionSchema } from "graphql";
import type { ReproStep } from "../evidence/failing-test.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { joinUrl } from "../http/target-url.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";
import type { GraphqlMethod, GraphqlSend } from "./graphql-transport.ts";

// What the GraphQL checks share: the endpoints the map holds (with their schema when it was read), a send
// function over the probe run's budgeted client, and a reproduction step replaying an exchange exactly.

export interface GraphqlEndpoint {
  path: string;
  url: string;
  schema: IntrospectionSchema | undefined;
}

/** Every GraphQL endpoint of the map: its `graphql` schemas, then paths only operations name. */
export function graphqlEndpoints(run: ProbeRun): GraphqlEndpoint[] {
  const endpoints = new Map<string, GraphqlEndpoint>();
  for (const entry of run.map.graphql ?? [])
    if (!endpoints.has(entry.path))
      endpoints.set(entry.path, {
        path: entry.path,
        url: joinUrl(run.target.baseUrl, entry.path),
        schema: entry.schema as unknown as IntrospectionSchema,
      });
  for (const operation of run.map.operations)
    if (operation.graphql && !endpoints.has(operation.path))
      endpoints.set(operation.path, {
        path: operation.path,
        url: joinUrl(run.target.baseUrl, operation.path),
        schema: undefined,
      });
  return [...endpoints.values()];
}

/** POST first where the write policy allows it (a GraphQL query changes nothing, but the policy is by method). */
export function methodsFor(run: ProbeRun): GraphqlMethod[] {
  return run.target.writesAllowed ? ["POST", "GET"] : ["GET"];
}

export function sendFor(run: ProbeRun, user: string | undefined): GraphqlSend {
  return (spec) => send(run, user, spec);
}

/** The location every GraphQL finding of an endpoint shares: the operations' own `POST <path>`. */
export function endpointLocation(path: string): { kind: "endpoint"; value: string } {
  return { kind: "endpoint", value: `POST ${path}` };
}

/** A reproduction step that sends what the exchange sent (method, path with query, JSON body). */
export function stepOf(name: string, exchange: HttpExchange): ReproStep {
  const url = new URL(exchange.request.url);
  const step: ReproStep = {
    name,
    method: exchange.request.method,
    path: `${url.pathname}${url.search}`,
    ...(exchange.user ? { as: exchange.user } : {}),
  };
  if (exchange.request.body !== undefined) {
    step.body = exchange.request.body;
    step.contentType = "application/json";
  }
  if (exchange.request.method === "GET") step.headers = { "apollo-require-preflight": "true" };
  return step;
}
