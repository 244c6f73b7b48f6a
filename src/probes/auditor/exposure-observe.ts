import type { Operation, Parameter } from "../../map/system-map.ts";
import { isAuthOperation, isSafeWrite, operationKey } from "../api/operation-index.ts";
import { sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { bodyKind, buildRequest } from "../api/request-builder.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import { asSchema, schemaType } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";

// What scan_exposure looks at: every GET read as the least privileged user (anonymously too when the
// document says public; item reads also at ids of other users the caller saw), and on every operation
// harmless malformed inputs that a careful server refuses cleanly: a query value of the wrong type, an
// unknown and a malformed id, a JSON body cut short.

export interface Observed {
  operation: Operation;
  prepared: PreparedRequest;
  user: string | undefined;
  exchange: HttpExchange;
  purpose: "read" | "error";
  /** What was malformed, for error provocations (`query from`, `path id`, `json body`). */
  provoked?: string;
  /** A record of another user, addressed by an id the caller saw in its own answers. */
  ofAnother?: boolean;
  /** Read as a higher role after the least privileged user was refused (exposure-roles.ts). */
  elevated?: boolean;
}

/** Harvested items read besides the first, per operation: enough to meet another user, bounded. */
const MORE_ITEMS = 2;
/** Query parameters made malformed per operation, one request each. */
const MAX_MALFORMED_QUERY = 4;

export interface ObserveStats {
  reads: number;
  errors_provoked: number;
  /** Operations left unobserved to keep the reserve. */
  skipped?: number;
}

/**
 * Observes every operation into `observations` (filled as answers arrive, so a budget cut short keeps what
 * was seen), leaving `reserve` requests of the budget unspent for confirmations.
 */
export async function observeOperations(
  run: ProbeRun,
  operations: readonly Operation[],
  factory: ResourceFactory,
  caller: string | undefined,
  stats: ObserveStats,
  observations: Observed[],
  reserve = 0,
): Promise<void> {
  const unanswered: Array<Omit<Observed, "exchange" | "purpose">> = [];
  await mapConcurrent(operations, 6, async (operation) => {
    if (run.client.remaining() <= reserve) {
      stats.skipped = (stats.skipped ?? 0) + 1;
      return;
    }
    const method = operation.method.toUpperCase();
    const located = await factory.pathValuesFor(operation, caller).catch(() => undefined);
    if (method === "GET" && located) {
      const others = await otherItems(factory, operation, caller, located);
      for (const values of [located.values, ...others]) {
        const prepared = buildRequest(operation, { seed: uniqueSeed(), pathValues: values });
        const callers = operation.security === "public" ? [caller, undefined] : [caller];
        const ofAnother = values !== located.values;
        for (const user of [...new Set(callers)]) {
          const exchange = await sendPrepared(run, user, prepared);
          stats.reads += 1;
          if (exchange?.response)
            observations.push({ operation, prepared, user, exchange, purpose: "read", ofAnother });
          else unanswered.push({ operation, prepared, user, ofAnother });
        }
      }
    }
    if (isAuthOperation(operation)) return;
    for (const { prepared, provoked } of provocations(run, operation, located?.values)) {
      const exchange = await sendPrepared(run, caller, prepared);
      stats.errors_provoked += 1;
      if (exchange)
        observations.push({ operation, prepared, user: caller, exchange, purpose: "error", provoked });
    }
  });
  // Reads that timed out while the server was busy with the provocations get one more, quiet try.
  for (const read of unanswered) {
    if (run.client.remaining() <= reserve) break;
    const exchange = await sendPrepared(run, read.user, read.prepared);
    stats.reads += 1;
    if (exchange?.response) observations.push({ ...read, exchange, purpose: "read" });
  }
}

/**
 * Items of other users the caller can address: ids it saw in its own answers (a colleague's id in an
 * `assignee_id`), read as well as the first one. Only for items addressed by their id alone.
 */
async function otherItems(
  factory: ResourceFactory,
  operation: Operation,
  caller: string | undefined,
  located: { values: Record<string, string>; owned: boolean },
): Promise<Array<Record<string, string>>> {
  const family = factory.familyOf(operation);
  const idParameter = family?.idParameter;
  if (!family || !idParameter || located.owned) return [];
  if (pathParameterNames(operation.path).some((name) => name !== idParameter)) return [];
  const ids = await factory.harvestedIds(family, caller, { every: true });
  return ids
    .filter((id) => id !== located.values[idParameter])
    .slice(0, MORE_ITEMS)
    .map((id) => ({ [idParameter]: id }));
}

/** A value of the wrong kind for a parameter: letters for a number or a date, quotes for free text. */
export function malformedValue(parameter: Pick<Parameter, "schema">): string {
  const schema = asSchema(parameter.schema);
  const type = schemaType(schema);
  if (type === "integer" || type === "number") return "1qaas'";
  if (type === "boolean") return "qaas";
  if (type === "array" || type === "object") return "qaas'";
  if (typeof schema.format === "string" || Array.isArray(schema.enum) || typeof schema.pattern === "string")
    return "qaas-99-99'";
  return `qaas'"<`;
}

/** Query parameters of an operation: the document's, else the ones the source route reads. */
export function queryParameters(run: ProbeRun, operation: Operation): Parameter[] {
  const own = operation.parameters.filter((parameter) => parameter.in === "query");
  if (own.length > 0) return own;
  const template = toTemplateForm(operation.path);
  const route = run.map.routes.find(
    (candidate) =>
      candidate.method.toUpperCase() === operation.method.toUpperCase() &&
      toTemplateForm(candidate.path) === template,
  );
  return (route?.parameters ?? []).filter((parameter) => parameter.in === "query");
}

/** Requests the server should refuse with a clean 4xx; each says what it malformed. */
function provocations(
  run: ProbeRun,
  operation: Operation,
  values: Record<string, string> | undefined,
): Array<{ prepared: PreparedRequest; provoked: string }> {
  const method = operation.method.toUpperCase();
  const names = pathParameterNames(operation.path);
  const result: Array<{ prepared: PreparedRequest; provoked: string }> = [];
  const base = () => buildRequest(operation, { seed: uniqueSeed(), pathValues: values });
  if (method === "GET") {
    for (const parameter of queryParameters(run, operation).slice(0, MAX_MALFORMED_QUERY)) {
      if (names.length > 0 && !values) break;
      const prepared = base();
      prepared.query[parameter.name] = malformedValue(parameter);
      result.push({ prepared, provoked: `query ${parameter.name}` });
    }
    if (names.length > 0) {
      const last = names[names.length - 1]!;
      const filled = Object.fromEntries(names.map((name) => [name, values?.[name] ?? "1"]));
      result.push({
        prepared: buildRequest(operation, {
          seed: uniqueSeed(),
          pathValues: { ...filled, [last]: `'"><%{qaas}` },
        }),
        provoked: `path ${last} (malformed)`,
      });
      const parameter = operation.parameters.find((entry) => entry.in === "path" && entry.name === last);
      const type = schemaType(asSchema(parameter?.schema));
      if (type === "integer" || type === "number" || /^\d+$/.test(values?.[last] ?? ""))
        result.push({
          prepared: buildRequest(operation, {
            seed: uniqueSeed(),
            pathValues: { ...filled, [last]: "987654321" },
          }),
          provoked: `path ${last} (unknown id)`,
        });
    }
    return result;
  }
  if (
    (method === "POST" || method === "PUT" || method === "PATCH") &&
    bodyKind(operation) === "json" &&
    run.target.writesAllowed &&
    isSafeWrite(operation) &&
    (names.length === 0 || values)
  ) {
    const prepared = base();
    prepared.rawBody = '{"qaas": ';
    result.push({ prepared, provoked: "JSON body cut short" });
  }
  return result;
}

/** The same request again: a disclosure must come back, not be a one-off. */
export async function repeat(run: ProbeRun, observed: Observed): Promise<HttpExchange | undefined> {
  return sendPrepared(run, observed.user, observed.prepared);
}

export function describeObserved(observed: Observed): string {
  const key = operationKey(observed.operation);
  return observed.provoked ? `${key} with a malformed ${observed.provoked}` : key;
}
