import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { LocationKind } from "../../envelope/taxonomy.ts";
import type { Operation, Parameter } from "../../map/system-map.ts";
import { operationKey } from "../api/operation-index.ts";
import { endpointLocation, sendPrepared } from "../api/probe-support.ts";
import type { PreparedRequest } from "../api/request-builder.ts";
import { buildRequest } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { buildFinding } from "../evidence/finding.ts";
import { stepFromPrepared } from "../evidence/repro-steps.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { pathParameterNames, toTemplateForm } from "../http/target-url.ts";
import { asSchema, schemaType } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { byPrivilege } from "../session/roles.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import type { Disclosure } from "./exposure-errors.ts";
import { disclosuresIn } from "./exposure-errors.ts";

// Verbose errors (CWE-209/489): a server error page or JSON error that carries the stack trace or the
// framework's debug page. Errors are provoked the way a tester provokes them, with values a careful
// handler refuses cleanly: a zero, a negative and an overflowing number where a count or page goes, quotes
// where text goes (a query built from text breaks on them). Three signals before a report: the normal
// request answers without a trace, the provoked one answers an error with the frames of a real trace (a
// file and a line per frame, or the debug page's own banner), and the same request provokes it again.
// Traces come from one error handler, so every operation that showed one is a single finding.

const MAX_OPERATIONS = 40;
const MAX_PARAMETERS = 4;
/** Operations that showed a trace before the check stops looking: enough to show it is the handler's doing. */
const ENOUGH_HITS = 4;
const MAX_RELATED = 6;

const COUNT_NAME =
  /^(page|pages|per_?page|page_?size|pagesize|limit|offset|size|count|start|skip|take|top|first|last|max|min|num|n|rows|items|batch)$/i;

interface Provocation {
  operation: Operation;
  user: string | undefined;
  baseline: HttpExchange;
  prepared: PreparedRequest;
  /** What was malformed: `query per_page=0`. */
  what: string;
  exchange: HttpExchange;
  repeat: HttpExchange;
  disclosure: Disclosure;
}

/** Values a handler should refuse with a clean 4xx (or ignore), by what the parameter holds. */
export function provokingValues(parameter: Pick<Parameter, "name" | "schema">): string[] {
  const type = schemaType(asSchema(parameter.schema));
  if (type === "integer" || type === "number" || COUNT_NAME.test(parameter.name))
    return ["0", "-1", "99999999999999999999999"];
  if (type === "boolean") return ["qaas'"];
  return ["qaas'\"", "qaas')"];
}

/** The query parameters of a GET: the operation's own, else those its source route reads. */
function queryParameters(run: ProbeRun, operation: Operation): Parameter[] {
  const own = operation.parameters.filter((parameter) => parameter.in === "query");
  if (own.length > 0) return own;
  const template = toTemplateForm(operation.path);
  const route = run.map.routes.find(
    (candidate) => candidate.method.toUpperCase() === "GET" && toTemplateForm(candidate.path) === template,
  );
  return (route?.parameters ?? []).filter((parameter) => parameter.in === "query");
}

/** The traces and debug pages an answer carries (SQL text alone is another family's concern). */
function traceIn(exchange: HttpExchange | undefined): Disclosure | undefined {
  const response = exchange?.response;
  if (!response || response.status < 400) return undefined;
  return disclosuresIn(response.body, response.json)
    .filter((disclosure) => disclosure.kind !== "sql-text")
    .sort((a, b) => Number(b.kind === "debug-page") - Number(a.kind === "debug-page"))[0];
}

/** The users to try, those the map says may call the operation first, least privileged first. */
function callersOf(operation: Operation, users: readonly ProfileUser[]): Array<string | undefined> {
  const roles = (operation.roles ?? []).map((role) => role.toLowerCase());
  const ordered = byPrivilege(users);
  const fitting = ordered.filter((user) => roles.includes(user.role.toLowerCase()));
  const rest = ordered.filter((user) => !fitting.includes(user));
  const callers: Array<string | undefined> = [...fitting, ...rest].map((user) => user.name);
  return callers.length > 0 ? callers.slice(0, 4) : [undefined];
}

async function baselineOf(
  run: ProbeRun,
  operation: Operation,
  users: readonly ProfileUser[],
): Promise<{ user: string | undefined; prepared: PreparedRequest; exchange: HttpExchange } | undefined> {
  for (const user of callersOf(operation, users)) {
    const prepared = buildRequest(operation, { seed: uniqueSeed() });
    const exchange = await sendPrepared(run, user, prepared);
    const status = exchange?.response?.status ?? 0;
    if (!exchange || status === 0 || status === 401 || status === 403 || status === 404) continue;
    // A redirect to a sign-in page is a refusal too; a normal answer carries no trace.
    if (status >= 300 && status < 400) continue;
    if (status >= 500 || traceIn(exchange)) return undefined;
    return { user, prepared, exchange };
  }
  return undefined;
}

async function provoke(
  run: ProbeRun,
  operation: Operation,
  users: readonly ProfileUser[],
): Promise<Provocation | undefined> {
  const parameters = queryParameters(run, operation).slice(0, MAX_PARAMETERS);
  if (parameters.length === 0) return undefined;
  const baseline = await baselineOf(run, operation, users);
  if (!baseline) return undefined;
  for (const parameter of parameters) {
    for (const value of provokingValues(parameter)) {
      const prepared: PreparedRequest = {
        ...baseline.prepared,
        query: { ...baseline.prepared.query, [parameter.name]: value },
      };
      const exchange = await sendPrepared(run, baseline.user, prepared);
      const disclosure = traceIn(exchange);
      if (!exchange || !disclosure) continue;
      const repeat = await sendPrepared(run, baseline.user, prepared);
      const again = traceIn(repeat);
      if (!repeat || !again || again.kind !== disclosure.kind) continue;
      return {
        operation,
        user: baseline.user,
        baseline: baseline.exchange,
        prepared,
        what: `query ${parameter.name}=${value}`,
        exchange,
        repeat,
        disclosure,
      };
    }
  }
  return undefined;
}

export async function checkVerboseErrors(
  run: ProbeRun,
  users: readonly ProfileUser[],
  stats: { errors_provoked: number },
): Promise<EnvelopeDraft[]> {
  const operations = run.map.operations
    .filter(
      (operation) =>
        operation.method.toUpperCase() === "GET" &&
        !operation.graphql &&
        pathParameterNames(operation.path).length === 0 &&
        queryParameters(run, operation).length > 0,
    )
    .slice(0, MAX_OPERATIONS);
  const hits: Provocation[] = [];
  await mapConcurrent(operations, 3, async (operation) => {
    if (hits.length >= ENOUGH_HITS) return;
    stats.errors_provoked += 1;
    const hit = await provoke(run, operation, users);
    if (hit) hits.push(hit);
  });
  const byWhat = new Map<string, Provocation[]>();
  for (const hit of hits.sort((a, b) => operationKey(a.operation).localeCompare(operationKey(b.operation))))
    byWhat.set(hit.disclosure.what, [...(byWhat.get(hit.disclosure.what) ?? []), hit]);
  return [...byWhat.values()].map((group) => findingOf(run, group));
}

function findingOf(run: ProbeRun, group: Provocation[]): EnvelopeDraft {
  const first = group[0]!;
  const key = operationKey(first.operation);
  const others = group.slice(1, MAX_RELATED + 1);
  const related: Array<{ kind: LocationKind; value: string }> = others.map((hit) =>
    endpointLocation(hit.operation),
  );
  const what = first.disclosure.what;
  const status = first.exchange.response?.status;
  const elsewhere =
    others.length > 0
      ? ` The same happens at ${others.map((hit) => `${operationKey(hit.operation)} (${hit.what})`).join(", ")}: the application's error handler sends it.`
      : "";
  return buildFinding(run, {
    domain: "security",
    defectClass: "misconfiguration",
    title: `Server errors show a ${what} (${key}, ${first.what})`,
    summary: `${key} answers normally, but with ${first.what} it answered ${status} with a ${what} in the body (${first.disclosure.value.slice(0, 120).replace(/\s+/g, " ")}…), and again on a second request.${elsewhere}`,
    impact:
      "Source paths, modules, line numbers, library versions and the code around a failure help an attacker aim; a debug page may run code.",
    location: endpointLocation(first.operation),
    related: related.length > 0 ? related : undefined,
    severity: first.disclosure.kind === "debug-page" ? "high" : "medium",
    confidence: 0.9,
    discriminator: "verbose-errors",
    exchanges: [
      { label: "provoked", exchange: first.exchange },
      { label: "provoked-again", exchange: first.repeat },
      { label: "normal", exchange: first.baseline },
    ],
    repro: {
      title: `${key} answers an error without a ${what}`,
      steps: [stepFromPrepared("provoked", first.prepared, first.user)],
      assertions: [
        {
          kind: "body_not_matches",
          step: "provoked",
          pattern: first.disclosure.pattern,
          message: "error answers must not carry stack traces or debug pages",
        },
      ],
    },
    suggestedFixArea: "the error handler (log the trace, answer a generic message)",
  });
}
