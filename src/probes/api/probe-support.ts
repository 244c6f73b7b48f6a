import type { Operation } from "../../map/system-map.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { isSuccess } from "../http/http-types.ts";
import { slowOperationsFor } from "../http/slow-operations.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { asSchema } from "../schema-values/json-schema.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send, submitForm } from "../session/probe-run.ts";
import type { FormFields } from "../session/send-form.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { operationKey } from "./operation-index.ts";
import type { PreparedRequest } from "./request-builder.ts";
import { formPairs, toSpec } from "./request-builder.ts";

export function endpointLocation(operation: Pick<Operation, "method" | "path">): {
  kind: "endpoint";
  value: string;
} {
  return { kind: "endpoint", value: operationKey(operation) };
}

/** Sends a prepared request, pacing operations that answer slowly (see slow-operations.ts). */
export async function sendPrepared(
  run: ProbeRun,
  user: string | undefined,
  prepared: PreparedRequest,
): Promise<HttpExchange | undefined> {
  return sendPaced(run, prepared.operation, async () =>
    asBrowserForm(prepared)
      ? (
          await submitForm(run, user, prepared.operation, formFields(prepared.body), {
            pathValues: prepared.pathValues,
            followRedirects: false,
          })
        )?.chain[0]
      : await send(run, user, toSpec(run.target.baseUrl, prepared)),
  );
}

/** Sends a request to `operation` under the run's pacing: undefined, unsent, while the operation is known slow. */
export async function sendPaced(
  run: ProbeRun,
  operation: Operation,
  sendRequest: () => Promise<HttpExchange | undefined>,
): Promise<HttpExchange | undefined> {
  const key = pacingKey(operation);
  const pacing = slowOperationsFor(run.context);
  if (!(await pacing.enter(key))) return undefined;
  let durationMs: number | undefined;
  try {
    const exchange = await sendRequest();
    durationMs = exchange?.durationMs;
    if (exchange && durationMs !== undefined && isSuccess(exchange)) pacing.answered(key, durationMs);
    return exchange;
  } finally {
    pacing.leave(key, durationMs);
  }
}

/** What pacing tells apart: each GraphQL field on its own, since they all share one `POST /graphql`. */
export function pacingKey(operation: Operation): string {
  const key = operationKey(operation);
  return operation.graphql ? `${key} ${operation.graphql.kind} ${operation.graphql.field}` : key;
}

/**
 * A form guarded by a CSRF token is sent as a browser sends it (its page loaded first for a fresh token);
 * a request the form could not produce (extra query, headers, a raw body) goes as it is.
 */
function asBrowserForm(prepared: PreparedRequest): boolean {
  return (
    prepared.operation.form?.csrf_field !== undefined &&
    prepared.rawBody === undefined &&
    Object.keys(prepared.query).length === 0 &&
    // An Accept header is what every request carries (a browser's too), not something a form cannot send.
    Object.keys(prepared.headers).every((name) => name.toLowerCase() === "accept") &&
    (prepared.body === undefined || isPlainObject(prepared.body))
  );
}

function formFields(body: unknown): FormFields {
  const fields: FormFields = {};
  for (const [name, value] of formPairs(isPlainObject(body) ? body : {})) {
    const previous = fields[name];
    fields[name] =
      previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return fields;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Whether the document lists this status (exactly, as `4XX`, or through `default`); true when it lists none. */
export function statusDocumented(operation: Operation, status: number): boolean {
  const keys = Object.keys(operation.responses).map((key) => key.toUpperCase());
  if (keys.length === 0) return true;
  return keys.includes(String(status)) || keys.includes(`${String(status)[0]}XX`) || keys.includes("DEFAULT");
}

export function documentedStatuses(operation: Operation): number[] {
  return Object.keys(operation.responses)
    .filter((key) => /^\d{3}$/.test(key))
    .map(Number);
}

/** The schema the document gives for a status' body: exact code, then `2XX`, then `default`. */
export function responseSchemaFor(operation: Operation, status: number): JsonSchema | undefined {
  const responses = operation.responses;
  const entry =
    responses[String(status)] ??
    responses[`${String(status)[0]}XX`] ??
    responses[`${String(status)[0]}xx`] ??
    responses.default;
  const schema = entry?.schema;
  return schema && Object.keys(schema).length > 0 ? asSchema(schema) : undefined;
}

/** The users to try for an operation, least privileged first; one named user when the caller asked for it. */
export function candidateUsers(users: readonly ProfileUser[], wanted?: string): Array<string | undefined> {
  if (wanted) return users.some((user) => user.name === wanted) ? [wanted] : [];
  return users.length > 0 ? users.map((user) => user.name) : [undefined];
}

/**
 * Sends as the least privileged user the operation accepts (a 401/403, or a redirect to the sign-in page,
 * moves to the next one up).
 */
export async function sendAsRightRole(
  run: ProbeRun,
  users: ReadonlyArray<string | undefined>,
  build: (user: string | undefined) => Promise<PreparedRequest | undefined>,
  /** How one request goes out; the timing probe sends without the run's pacing of slow operations. */
  sender: (
    run: ProbeRun,
    user: string | undefined,
    prepared: PreparedRequest,
  ) => Promise<HttpExchange | undefined> = sendPrepared,
): Promise<{ user: string | undefined; prepared: PreparedRequest; exchange: HttpExchange } | undefined> {
  let last: { user: string | undefined; prepared: PreparedRequest; exchange: HttpExchange } | undefined;
  for (const user of users) {
    const prepared = await build(user);
    if (!prepared) continue;
    const exchange = await sender(run, user, prepared);
    if (!exchange) continue;
    last = { user, prepared, exchange };
    const status = exchange.response?.status ?? 0;
    // A redirect to the sign-in page (or the sign-in form in its place) refuses the caller like a 401.
    if (status !== 401 && status !== 403 && !run.sessions.endedSession(exchange)) return last;
  }
  return last;
}

export function isServerError(exchange: HttpExchange | undefined): boolean {
  const status = exchange?.response?.status ?? 0;
  return status >= 500 && status < 600;
}

/** A short, masked excerpt of a body for a summary. */
export function bodyExcerpt(run: ProbeRun, exchange: HttpExchange | undefined, limit = 300): string {
  const body = run.masker
    .maskText(exchange?.response?.body ?? "")
    .replace(/\s+/g, " ")
    .trim();
  return body.length > limit ? `${body.slice(0, limit)}…` : body;
}
