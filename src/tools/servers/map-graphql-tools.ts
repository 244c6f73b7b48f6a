import { z } from "zod";
import type { GuardedAction } from "../../guardrails/actions.ts";
import type { GraphqlMethod } from "../../probes/graphql/graphql-transport.ts";
import { type GraphqlLive, mapGraphql } from "../../probes/graphql/map-graphql.ts";
import { BudgetExhaustedError, WriteNotAllowedError } from "../../probes/http/http-client.ts";
import type { HttpExchange, HttpRequestSpec } from "../../probes/http/http-types.ts";
import { openHttpClient, probeTargetOf } from "../../probes/http/run-http.ts";
import { byPrivilege } from "../../probes/session/roles.ts";
import { sessionPoolFor } from "../../probes/session/session-pool.ts";
import type { ToolContext } from "../context.ts";
import { err, ok } from "../result.ts";
import { defineTool, type ToolDefinition } from "../tool.ts";
import { mapDraft } from "./map-draft.ts";

// MAPPER's GraphQL tool: endpoints from the source, the frontend and the usual paths, each schema by
// introspection (else SDL in the source, else the frontend's operations), every root field one operation of the inventory. Answers a
// summary; the schemas and operations go into the draft map.

const EXAMPLES = 8;
const DEFAULT_MAX_REQUESTS = 150;

const mapGraphqlTool = defineTool({
  name: "map_graphql",
  server: "map",
  description:
    "Find the target's GraphQL endpoints (source: Apollo, express-graphql, graphql-http, yoga, mercurius, graphene/strawberry/ariadne views; the frontend's scripts; the usual paths tried live with `{ __typename }`), read each schema by introspection (else from SDL in the source, else sketched from the operations the served pages and scripts send, each root field typed by the server's validation errors without running it) and add every root query, mutation and subscription field to the draft map as an operation (POST <endpoint>, its arguments as the JSON body schema). Optional `paths`: endpoint paths to try first.",
  input: z.strictObject({
    paths: z.array(z.string().min(1).max(200)).max(10).optional(),
    max_scripts: z.number().int().min(0).max(30).optional(),
    max_requests: z.number().int().positive().max(1000).optional(),
  }),
  actions: (_input, context) => {
    const target = probeTargetOf(context);
    if (typeof target === "string") return [];
    const actions: GuardedAction[] = [{ kind: "http_request", method: "GET", url: target.baseUrl }];
    if (target.writesAllowed) actions.push({ kind: "http_request", method: "POST", url: target.baseUrl });
    return actions;
  },
  async run(input, context) {
    const draft = mapDraft(context);
    const started = performance.now();
    const live = liveAccess(context, input.max_requests ?? DEFAULT_MAX_REQUESTS);
    const knownPaths = [
      ...draft.documentedOperations.map((operation) => operation.path),
      ...draft.routes.map((route) => route.path),
      ...[...draft.candidates.entries()]
        .filter(([part]) => part !== "graphql")
        .flatMap(([, candidates]) => candidates.map((candidate) => candidate.path)),
    ];
    try {
      const mapping = await mapGraphql({
        root: context.target?.root,
        exclude: context.target?.goldenLedger ? [context.target.goldenLedger] : [],
        live: typeof live === "string" ? undefined : live.access,
        pages: draft.pages,
        knownPaths,
        givenPaths: input.paths,
        maxScripts: input.max_scripts,
      });
      const notes = [...mapping.notes];
      if (typeof live === "string") notes.push(`GraphQL not tried live: ${live}`);
      else if (live.exhausted()) notes.push("GraphQL mapping stopped early: its request budget was spent");
      draft.graphql = mapping.graphql;
      draft.candidates.set("graphql", mapping.candidates);
      draft.notes.set("graphql", notes);
      const byKind: Record<string, number> = {};
      for (const candidate of mapping.candidates)
        if (candidate.graphql) byKind[candidate.graphql.kind] = (byKind[candidate.graphql.kind] ?? 0) + 1;
      return ok({
        endpoints: mapping.endpoints,
        operations: mapping.candidates.length,
        by_kind: byKind,
        examples: mapping.candidates.slice(0, EXAMPLES).map(({ graphql }) => {
          const args = graphql?.arguments.map((argument) => `${argument.name}: ${argument.type}`).join(", ");
          return `${graphql?.kind} ${graphql?.field}${args ? `(${args})` : ""}${graphql?.returns ? `: ${graphql.returns}` : ""}`;
        }),
        tried: mapping.probes.map(
          (probe) =>
            `${probe.path} (${probe.origin}): ${probe.verdict}${probe.status ? ` ${probe.status}` : ""}`,
        ),
        source: {
          files_read: mapping.source.files,
          endpoints: mapping.source.endpoints.map(
            (endpoint) => `${endpoint.path} (${endpoint.file}:${endpoint.line}, ${endpoint.framework})`,
          ),
          sdl_from: mapping.source.sdl_from.slice(0, EXAMPLES),
        },
        requests: typeof live === "string" ? 0 : live.sent(),
        seconds: Math.round((performance.now() - started) / 10) / 100,
        notes,
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      draft.notes.set("graphql", [`GraphQL not mapped: ${reason}`]);
      return err(`GraphQL not mapped: ${reason}`);
    }
  },
});

export const mapGraphqlTools: ToolDefinition[] = [mapGraphqlTool];

interface LiveAccess {
  access: GraphqlLive;
  sent(): number;
  exhausted(): boolean;
}

/**
 * Requests through the run's client (MAPPER's budget, the concurrency cap, the write policy) and its
 * sessions. A write the policy refuses, a spent budget or a failed sign-in answers undefined: mapping goes
 * on with what it has rather than failing.
 */
function liveAccess(context: ToolContext, maxRequests: number): LiveAccess | string {
  const target = probeTargetOf(context);
  if (typeof target === "string") return target;
  const client = openHttpClient(context, target, { maxRequests });
  const sessions = sessionPoolFor(context, target.baseUrl);
  let exhausted = false;
  const sendAs =
    (user: string | undefined) =>
    async (spec: HttpRequestSpec): Promise<HttpExchange | undefined> => {
      try {
        return await sessions.send(client, user, spec);
      } catch (error) {
        if (error instanceof BudgetExhaustedError) exhausted = true;
        else if (
          !(error instanceof WriteNotAllowedError) &&
          !(error instanceof Error && error.name === "QaasError")
        )
          throw error;
        return undefined;
      }
    };
  const methods: GraphqlMethod[] = target.writesAllowed ? ["POST", "GET"] : ["GET"];
  return {
    access: {
      baseUrl: target.baseUrl,
      sendAs,
      users: byPrivilege(sessions.users())
        .slice(0, 1)
        .map((user) => user.name),
      methods,
    },
    sent: () => client.stats.sent,
    exhausted: () => exhausted,
  };
}
