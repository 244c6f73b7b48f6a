import type { Operation } from "../../map/system-map.ts";
import { graphqlRequestBody } from "../graphql/graphql-request.ts";
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
  /** Fill the body's optional properties too (privileged ones aside), not only the required ones. */
  includeOptional?: boolean;
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
        ? validValue(schema, { seed: options.seed, includeOptional: options.includeOptional })
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
  return serializeRequestBody(prepared).body;
}

/**
 * The body as sent and the content type that goes with it: urlencoded and multipart bodies as a browser
 * encodes a form (a multipart type carries its boundary), anything else as JSON.
 */
export function serializeRequestBody(prepared: PreparedRequest): { body?: string; contentType?: string } {
  const contentType = prepared.contentType;
  if (prepared.rawBody !== undefined) return { body: prepared.rawBody, contentType };
  if (prepared.body === undefined) return { contentType };
  const type = contentType?.toLowerCase() ?? "";
  const isObject =
    prepared.body !== null && typeof prepared.body === "object" && !Array.isArray(prepared.body);
  if (isObject && type.startsWith("application/x-www-form-urlencoded")) {
    return { body: encodeUrlencoded(formPairs(prepared.body as Record<string, unknown>)), contentType };
  }
  // A GraphQL field's body is its variables: probes fill and mutate them like any body, sent in the document.
  if (prepared.operation.graphql && isObject) {
    return { body: JSON.stringify(graphqlRequestBody(prepared.operation, prepared.body)), contentType };
  }
  if (isObject && type.startsWith("multipart/form-data")) {
    const pairs = formPairs(prepared.body as Record<string, unknown>);
    const boundary = boundaryOf(contentType!) ?? multipartBoundary(prepared.seed ?? "", pairs);
    return {
      body: encodeMultipart(pairs, boundary),
      contentType: `multipart/form-data; boundary=${boundary}`,
    };
  }
  return { body: JSON.stringify(prepared.body), contentType };
}

/** A file in a multipart body, sent as a small text part. */
export interface FilePart {
  filename: string;
  content: string;
  contentType?: string;
}

export type FormValue = string | FilePart;

export function isFilePart(value: unknown): value is FilePart {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as FilePart).filename === "string" &&
    typeof (value as FilePart).content === "string"
  );
}

/** A form object as ordered name/value pairs: arrays repeat the name, files stay files, the rest are strings. */
export function formPairs(body: Record<string, unknown>): Array<[string, FormValue]> {
  const pairs: Array<[string, FormValue]> = [];
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      pairs.push([name, isFilePart(item) ? item : stringify(item)]);
    }
  }
  return pairs;
}

/** `a=1&b=x%20y`: how a browser encodes a form (a file sends its name, as browsers do). */
export function encodeUrlencoded(pairs: ReadonlyArray<readonly [string, FormValue]>): string {
  return pairs
    .map(
      ([name, value]) =>
        `${encodeURIComponent(name)}=${encodeURIComponent(isFilePart(value) ? value.filename : value)}`,
    )
    .join("&");
}

/** A multipart/form-data body (RFC 7578), CRLF line ends, files as text parts. */
export function encodeMultipart(
  pairs: ReadonlyArray<readonly [string, FormValue]>,
  boundary: string,
): string {
  const quote = (text: string) => text.replace(/\r|\n/g, " ").replace(/"/g, "%22");
  const parts = pairs.map(([name, value]) => {
    if (isFilePart(value)) {
      return (
        `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"; filename="${quote(value.filename)}"\r\n` +
        `Content-Type: ${value.contentType ?? "text/plain"}\r\n\r\n${value.content}\r\n`
      );
    }
    return `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`;
  });
  return `${parts.join("")}--${boundary}--\r\n`;
}

/** A boundary found in none of the values; stable for one seed, so a repeated serialisation is identical. */
export function multipartBoundary(seed: string, pairs: ReadonlyArray<readonly [string, FormValue]>): string {
  const text = pairs.map(([name, value]) => `${name}${isFilePart(value) ? value.content : value}`).join("");
  let hash = 2166136261;
  for (const char of `${seed}${text}`) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
  for (let attempt = 0; ; attempt += 1) {
    const boundary = `----qaasFormBoundary${hash.toString(16).padStart(8, "0")}${attempt || ""}`;
    if (!text.includes(boundary)) return boundary;
  }
}

function boundaryOf(contentType: string): string | undefined {
  return /boundary=("?)([^";]+)\1/i.exec(contentType)?.[2];
}

export function toSpec(baseUrl: string, prepared: PreparedRequest): HttpRequestSpec {
  const { body, contentType } = serializeRequestBody(prepared);
  const headers = { ...prepared.headers };
  if (body !== undefined) headers["content-type"] = contentType ?? "application/json";
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
