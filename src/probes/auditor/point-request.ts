import { candidateUsers, isServerError, sendAsRightRole, sendPrepared } from "../api/probe-support.ts";
import type { FormValue, PreparedRequest } from "../api/request-builder.ts";
import { buildRequest, clonePrepared, requestSchema } from "../api/request-builder.ts";
import type { ResourceFactory } from "../api/resource-factory.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { reseed } from "../api/value-tools.ts";
import type { HttpExchange } from "../http/http-types.ts";
import { missingFieldsNamed, namedFieldValue } from "../http/missing-fields.ts";
import { isSignInOperation } from "../injection/sign-in-fields.ts";
import { validValue } from "../schema-values/valid-value.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { submitForm } from "../session/probe-run.ts";
import type { ProfileUser } from "../session/sign-in.ts";
import { withEveryFormField } from "./form-body.ts";
import type { InputPoint } from "./input-points.ts";
import { bodyEncoding } from "./input-points.ts";

export interface PointBaseline {
  point: InputPoint;
  user: string | undefined;
  prepared: PreparedRequest;
  exchange: HttpExchange;
  /** The value the point carries in the baseline request; payloads are appended to it. */
  value: string;
}

export interface BaselineOptions {
  /**
   * Values to try at the point, in order, when the request's own value (or the first of these) draws a
   * server error: the first that does not becomes the baseline. A probe that appends to the value needs
   * one the server handles (`1` where a generated word breaks an `ORDER BY` or an `IN (...)` list).
   */
  fallbacks?: readonly string[];
  /** What counts as a refused value (default: a 5xx). */
  rejects?: (exchange: HttpExchange) => boolean;
}

/** A request that reaches the point as the least privileged user the operation accepts. */
export async function pointBaseline(
  run: ProbeRun,
  factory: ResourceFactory,
  point: InputPoint,
  users: readonly ProfileUser[],
  options: BaselineOptions = {},
): Promise<PointBaseline | undefined> {
  let template: PreparedRequest | undefined;
  const sent = await sendAsRightRole(
    run,
    callersOf(run, point, users),
    async (user) => {
      // With no id to be found, a read still goes out with the document's example or a generated value: a
      // probe of the path parameter itself needs no real id.
      const located =
        (await factory.pathValuesFor(point.operation, user)) ??
        (isRead(point.operation) ? { values: {} } : undefined);
      if (!located) return undefined;
      template = preparePoint(point, located.values);
      // A value the request already carries keeps its JSON type (a number stays a number).
      return pointValue(template, point) === undefined
        ? withValue(template, point, defaultValue(point))
        : template;
    },
    sendPoint,
  );
  if (!sent) return undefined;
  const result = await withAnsweredFields(run, point, sent);
  if (template && result !== sent) template = result.prepared;
  const rejects = options.rejects ?? isServerError;
  let chosen = result;
  if (rejects(result.exchange) && template) {
    const tried = new Set([pointValue(result.prepared, point)]);
    for (const value of options.fallbacks ?? []) {
      if (tried.has(value)) continue;
      tried.add(value);
      const prepared = withValue(template, point, value);
      const exchange = await sendPoint(run, result.user, prepared);
      if (!exchange) continue;
      chosen = { user: result.user, prepared, exchange };
      if (!rejects(exchange)) break;
    }
  }
  return {
    point,
    user: chosen.user,
    prepared: chosen.prepared,
    exchange: chosen.exchange,
    value: pointValue(chosen.prepared, point) ?? "",
  };
}

/** Rounds of "this field is missing" followed: each answer may name the next field its handler checks. */
const NAMING_ROUNDS = 2;

/**
 * The request again with the fields its answer said it lacked: a handler that checks a field nothing
 * documents before the point's own (a form its page posts by script) never reaches the point otherwise.
 */
async function withAnsweredFields(
  run: ProbeRun,
  point: InputPoint,
  sent: { user: string | undefined; prepared: PreparedRequest; exchange: HttpExchange },
): Promise<{ user: string | undefined; prepared: PreparedRequest; exchange: HttpExchange }> {
  if (point.in !== "body" && point.in !== "query") return sent;
  let current = sent;
  for (let round = 0; round < NAMING_ROUNDS; round += 1) {
    const { body, query } = current.prepared;
    const fields =
      point.in === "query"
        ? Object.keys(query)
        : body && typeof body === "object" && !Array.isArray(body)
          ? Object.keys(body)
          : undefined;
    if (!fields) return current;
    const missing = missingFieldsNamed(current.exchange, [...fields, point.name]).slice(0, 3);
    if (missing.length === 0) return current;
    const seed = uniqueSeed();
    let prepared = current.prepared;
    for (const name of missing)
      prepared = withValue(prepared, { ...point, name }, namedFieldValue(name, seed));
    const exchange = await sendPoint(run, current.user, prepared);
    if (!exchange) return current;
    current = { user: current.user, prepared, exchange };
  }
  return current;
}

/**
 * Who sends the point's requests, in order: anonymous first where the map saw anonymous callers reach the
 * operation (a sign-in page, a public search), since a page that shows a sign-in form to a signed-in
 * session reads as a lost session and every probe request there would sign in again; then the users, least
 * privileged first (a 401/403 moves to the next).
 */
export function callersOf(
  run: ProbeRun,
  point: InputPoint,
  users: readonly ProfileUser[],
): Array<string | undefined> {
  // A sign-in or sign-up posted with a session signs that session in as someone else: those go out from a
  // fresh anonymous visitor, so the run's users stay who they are.
  if (isSignInOperation(run, point.operation)) return [undefined];
  const signedIn = candidateUsers(users);
  if (!point.operation.roles?.includes("anonymous") || signedIn.includes(undefined)) return signedIn;
  return [undefined, ...signedIn];
}

function isRead(operation: InputPoint["operation"]): boolean {
  return ["GET", "HEAD"].includes(operation.method.toUpperCase()) && !operation.graphql;
}

function defaultValue(point: InputPoint): string {
  return point.choices?.[0] ?? (point.numeric ? "1" : "qaas");
}

/** A valid request for the point's operation; a multipart body is generated here (the builder skips it). */
export function preparePoint(point: InputPoint, pathValues: Record<string, string>): PreparedRequest {
  const prepared = buildRequest(point.operation, { seed: uniqueSeed(), pathValues });
  if (prepared.body === undefined && bodyEncoding(point.operation) === "multipart") {
    const schema = requestSchema(point.operation);
    prepared.body = schema ? validValue(schema, { seed: prepared.seed ?? uniqueSeed() }) : {};
    prepared.contentType = "multipart/form-data";
  }
  return withEveryFormField(prepared);
}

/**
 * Sends a point's request the way its client would: a form the application renders is submitted as a
 * browser does (its page loaded first for a fresh CSRF token, redirects followed); anything else as is.
 */
export async function sendPoint(
  run: ProbeRun,
  user: string | undefined,
  prepared: PreparedRequest,
): Promise<HttpExchange | undefined> {
  return (await sendPointChain(run, user, prepared))?.exchange;
}

/**
 * Like `sendPoint`, with every exchange on the way: a form post's own answer (often a redirect) and the
 * redirects a browser followed after it, the landed page last.
 */
export async function sendPointChain(
  run: ProbeRun,
  user: string | undefined,
  prepared: PreparedRequest,
): Promise<{ exchange: HttpExchange; chain: HttpExchange[] } | undefined> {
  const operation = prepared.operation;
  const viaForm =
    operation.form !== undefined &&
    operation.method.toUpperCase() !== "GET" &&
    prepared.body !== null &&
    typeof prepared.body === "object" &&
    !Array.isArray(prepared.body);
  if (!viaForm) {
    const exchange = await sendPrepared(run, user, prepared);
    return exchange ? { exchange, chain: [exchange] } : undefined;
  }
  const fields: Record<string, FormValue | FormValue[]> = {};
  for (const [name, value] of Object.entries(prepared.body as Record<string, unknown>)) {
    if (value === undefined || value === null) continue;
    fields[name] = Array.isArray(value) ? value.map(formValue) : formValue(value);
  }
  const submission = await submitForm(run, user, operation, fields, { pathValues: prepared.pathValues });
  return submission ? { exchange: submission.exchange, chain: submission.chain } : undefined;
}

function formValue(value: unknown): FormValue {
  if (value && typeof value === "object" && "filename" in value) return value as FormValue;
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

export function pointValue(prepared: PreparedRequest, point: InputPoint): string | undefined {
  if (point.in === "query") return prepared.query[point.name];
  if (point.in === "path") return prepared.pathValues[point.name];
  if (point.in === "header") return prepared.headers[point.name.toLowerCase()];
  if (point.in === "cookie") return parseCookies(prepared.headers.cookie).get(point.name);
  let current: unknown = prepared.body;
  for (const part of point.name.split(".")) {
    if (!current || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current === undefined || current === null || typeof current === "object"
    ? undefined
    : String(current);
}

/**
 * A copy of the request with the point set to `value`; body writes get a fresh seed so unique fields stay
 * unique. A number stays a number in a JSON body (a strict server refuses `"8080"` for an integer field)
 * and becomes its text everywhere else.
 */
export function withValue(
  prepared: PreparedRequest,
  point: InputPoint,
  given: string | number,
): PreparedRequest {
  const value = String(given);
  const copy = clonePrepared(prepared);
  if (point.in === "body" && prepared.seed) {
    const seed = uniqueSeed();
    copy.body = reseed(copy.body, prepared.seed, seed);
    copy.seed = seed;
  }
  switch (point.in) {
    case "query":
      copy.query[point.name] = value;
      break;
    case "path":
      copy.pathValues[point.name] = value;
      break;
    case "header":
      copy.headers[point.name.toLowerCase()] = value.replace(/[\r\n]/g, " ");
      break;
    case "cookie": {
      const cookies = parseCookies(copy.headers.cookie);
      cookies.set(point.name, cookieSafe(value));
      copy.headers.cookie = [...cookies].map(([name, inner]) => `${name}=${inner}`).join("; ");
      break;
    }
    case "body":
      copy.body = setAtPath(copy.body, point.name.split("."), given);
      break;
  }
  return copy;
}

/** The container with `value` at `path`; missing objects and arrays along the way are created. */
function setAtPath(container: unknown, path: readonly string[], value: string | number): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  const index = /^\d+$/.test(head) ? Number(head) : undefined;
  if (index !== undefined) {
    const list = Array.isArray(container) ? [...container] : [];
    while (list.length <= index) list.push(undefined);
    list[index] = setAtPath(list[index], rest, value);
    return list;
  }
  const record =
    container && typeof container === "object" && !Array.isArray(container)
      ? { ...(container as Record<string, unknown>) }
      : {};
  record[head] = setAtPath(record[head], rest, value);
  return record;
}

function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0) cookies.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return cookies;
}

/**
 * A cookie value as servers read it back: quotes, spaces and operators pass through every common parser
 * as they are; only the separator and control characters are percent-encoded.
 */
function cookieSafe(value: string): string {
  return value.replace(/[;\r\n\0,]/g, (char) => `%${char.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
