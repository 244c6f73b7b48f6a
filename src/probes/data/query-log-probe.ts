import type { ToolContext } from "../../tools/context.ts";
import { operationKey, selectOperations } from "../api/operation-index.ts";
import { candidateUsers, sendAsRightRole } from "../api/probe-support.ts";
import { buildRequest } from "../api/request-builder.ts";
import { ResourceFactory, uniqueSeed } from "../api/resource-factory.ts";
import { statusOf } from "../http/http-types.ts";
import { statementLogOf } from "../load/statement-log.ts";
import { baseStats, openProbeRun, usableUsers } from "../session/probe-run.ts";

// query_log: the statements the target logged — the last ones, or the ones one read request caused.

export interface QueryLogOptions {
  /** `GET /path/{id}` (or a path or operation id) to send once and capture; omitted: the log's tail. */
  operation?: string;
  query?: Record<string, string>;
  user?: string;
  tail?: number;
}

export async function queryLog(
  context: ToolContext,
  options: QueryLogOptions,
): Promise<Record<string, unknown> | string> {
  const log = statementLogOf(context);
  if (typeof log === "string") return log;
  if (!options.operation) {
    const statements = log.tail(Math.min(options.tail ?? 50, 500));
    return {
      file: log.relative,
      statements,
      uri: context.putArtifact("query_log/tail.log", `${statements.join("\n")}\n`),
    };
  }
  const run = openProbeRun(context, "query_log", { max_requests: 10 });
  if (typeof run === "string") return run;
  const operation = selectOperations(run.map, options.operation).find(
    (candidate) => candidate.method.toUpperCase() === "GET",
  );
  if (!operation)
    return `no GET operation matches "${options.operation}" in the system map (query_log only sends reads)`;
  const factory = new ResourceFactory(run);
  const users = options.user ? [options.user] : candidateUsers(await usableUsers(run));
  const seen = await log.around(() =>
    sendAsRightRole(run, users, async (user) => {
      const located = await factory.pathValuesFor(operation, user);
      if (!located) return undefined;
      const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: located.values });
      prepared.query = { ...prepared.query, ...(options.query ?? {}) };
      return prepared;
    }),
  );
  const key = operationKey(operation);
  const shapes = Object.fromEntries(seen.window.shapes);
  const uri = context.putArtifact(
    `query_log/${key.toLowerCase().replace(/[^a-z0-9]+/g, "-")}.json`,
    `${JSON.stringify({ operation: key, statements: seen.window.statements, shapes }, null, 2)}\n`,
  );
  return {
    operation: key,
    user: seen.result?.user ?? null,
    status: seen.result ? statusOf(seen.result.exchange) : null,
    queries: seen.window.queries.length,
    statements: seen.window.statements.slice(0, 200),
    shapes,
    uri,
    stats: baseStats(run),
  };
}
