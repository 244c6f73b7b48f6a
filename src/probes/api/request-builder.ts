import type { Operation } from "../../map/system-map.ts";
import type { HttpRequestSpec } from "../http/http-types.ts";
import { buildQuery, fillPath, joinUrl, pathParameterNames } from "../http/target-url.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { asSchema, forDirection, propertiesOf } from "../schema-values/json-schema.ts";
import { validValue } from "../schema-values/valid-value.ts";

/** A request for one operation before it is sent: every part still editable by a probe. */
export interface PreparedRequest {
  operation: Operation;
  /** The unique part of generated values; a reproduction swaps it for a fresh one on each run. */
  seed?: string;
  pathValues: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** A JSON-able body, serialised by the operation's content type. */
  body?: unknown;
  /** A body sent exactly as given (a malformed document); wins over `body`. */
  rawBody?: string;
  contentType?: string;
}

export type BodyKind = "json" | "form" | "none" | "unsupported";

export function bodyKind(operation: Operation): BodyKind {
  const type = operation.request_body?.content_type.toLowerCase();
  if (!type) return "none";
  if (type.includes("json")) return "json";
  if (type.includes("x-www-form-urlencoded")) return "form";
  return "unsupported";
}

export function requestSchema(operation: Operation): JsonSchema | undefined {
  const schema = operation.request_body?.schema;
  return schema ? forDirection(asSchema(schema), "request") : undefined;
}

export interface BuildOptions {
  seed: string;
  pathValues?: Record<string, string>;
  /** Finds an id for a body property that refers to another resource (`projectId`, `owner_id`). */
  reference?: (property: string) => string | undefined;
}

/** A valid request for `operation`: the schema's values (or the document's example), ids as given. */
export function buildRequest(operation: Operation, options: BuildOptions): PreparedRequest {
  const pathValues: Record<string, string> = {};
  const query: Record<string, string> = {};
  const headers: Record<string, string> = { accept: "application/json, text/html;q=0.9, */*;q=0.8" };
  for (const name of pathParameterNames(operation.path)) {
    const given = options.pathValues?.[name];
    const parameter = operation.parameters.find((entry) => entry.name === name && entry.in === "path");
    pathValues[name] = given ?? String(parameterValue(parameter, name, options.seed));
  }
  for (const parameter of operation.parameters) {
    if (!parameter.required) continue;
    const value = parameterValue(parameter, parameter.name, options.seed);
    if (parameter.in === "query") query[parameter.name] = stringify(value);
    else if (parameter.in === "header") headers[parameter.name.toLowerCase()] = stringify(value);
  }
  const prepared: PreparedRequest = { operation, seed: options.seed, pathValues, query, headers };
  const kind = bodyKind(operation);
  if (kind === "json" || kind === "form") {
    const schema = requestSchema(operation);
    let body: unknown =
      schema && Object.keys(schema).length > 0
        ? validValue(schema, { seed: options.seed })
        : operation.request_body?.example;
    if (body === undefined && operation.request_body?.example !== undefined)
      body = operation.request_body.example;
    if (body && typeof body === "object" && !Array.isArray(body) && schema && options.reference) {
      body = fillReferences(body as Record<string, unknown>, schema, options.reference);
    }
    prepared.body = body ?? {};
    prepared.contentType = kind === "json" ? "application/json" : "application/x-www-form-urlencoded";
  }
  return prepared;
}

function parameterValue(
  parameter: Operation["parameters"][number] | undefined,
  name: string,
  seed: string,
): unknown {
  if (parameter?.example !== undefined) return parameter.example;
  return validValue(asSchema(parameter?.schema ?? { type: "string" }), { seed, name });
}

const REFERENCE_PROPERTY = /^(.+?)[_-]?(id|Id|ID)$/;

function fillReferences(
  body: Record<string, unknown>,
  schema: JsonSchema,
  reference: (property: string) => string | undefined,
): Record<string, unknown> {
  const filled = { ...body };
  const properties = propertiesOf(schema);
  for (const name of Object.keys(filled)) {
    if (!REFERENCE_PROPERTY.test(name)) continue;
    const id = reference(name);
    if (id === undefined) continue;
    const type = properties[name]?.type;
    filled[name] = type === "integer" || type === "number" ? Number(id) : id;
  }
  return filled;
}

function stringify(value: unknown): string {
  return typeof value === "string"
    ? value
    : typeof value === "object"
      ? JSON.stringify(value)
      : String(value);
}

export function concretePath(prepared: PreparedRequest): string {
  return fillPath(prepared.operation.path, prepared.pathValues);
}

export function serializeBody(prepared: PreparedRequest): string | undefined {
  if (prepared.rawBody !== undefined) return prepared.rawBody;
  if (prepared.body === undefined) return undefined;
  if (
    prepared.contentType === "application/x-www-form-urlencoded" &&
    prepared.body &&
    typeof prepared.body === "object"
  ) {
    return Object.entries(prepared.body as Record<string, unknown>)
      .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(stringify(value))}`)
      .join("&");
  }
  return JSON.stringify(prepared.body);
}

export function toSpec(baseUrl: string, prepared: PreparedRequest): HttpRequestSpec {
  const body = serializeBody(prepared);
  const headers = { ...prepared.headers };
  if (body !== undefined) headers["content-type"] = prepared.contentType ?? "application/json";
  return {
    method: prepared.operation.method.toUpperCase(),
    url: `${joinUrl(baseUrl, concretePath(prepared))}${buildQuery(prepared.query)}`,
    headers,
    body,
  };
}

/** A fresh copy, safe to mutate. */
export function clonePrepared(prepared: PreparedRequest): PreparedRequest {
  return {
    ...prepared,
    pathValues: { ...prepared.pathValues },
    query: { ...prepared.query },
    headers: { ...prepared.headers },
    body: prepared.body === undefined ? undefined : structuredClone(prepared.body),
  };
}
