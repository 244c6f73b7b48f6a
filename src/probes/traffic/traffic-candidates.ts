import { type OperationCandidate, templateOfConcrete } from "../../map/inventory.ts";
import type { Parameter } from "../../map/system-map.ts";
import type { ObservedRequest } from "./record-traffic.ts";

// Observed requests as inventory candidates: one per method and path shape (`/api/users/17` and
// `/api/users/18` are one), with the query parameters and body fields seen. Paths stay concrete: the
// inventory matches them to a known template or turns their ids into `{id}`.

/** Values not kept as examples in a saved map. */
const SECRET_NAME = /pass|secret|token|session|auth|key|signature|otp|csrf|xsrf/i;

export function candidatesFromTraffic(requests: readonly ObservedRequest[]): OperationCandidate[] {
  const byKey = new Map<string, OperationCandidate>();
  for (const request of requests) {
    const url = new URL(request.url);
    const path = url.pathname;
    const key = `${request.method} ${templateOfConcrete(path, [])}`;
    let candidate = byKey.get(key);
    if (!candidate) {
      candidate = { method: request.method, path, provenance: "traffic", concrete: true, roles: [] };
      byKey.set(key, candidate);
    }
    if (!candidate.roles!.includes(request.role)) candidate.roles!.push(request.role);
    for (const [name, value] of url.searchParams) addParameter(candidate, name, value);
    const body = bodyOf(request);
    if (body) {
      if (!candidate.request_body) candidate.request_body = body;
      else if (body.schema && candidate.request_body.content_type === body.content_type) {
        const known = (candidate.request_body.schema?.properties ?? {}) as Record<string, unknown>;
        const incoming = (body.schema.properties ?? {}) as Record<string, unknown>;
        candidate.request_body.schema = { type: "object", properties: { ...incoming, ...known } };
      }
    }
  }
  return [...byKey.values()];
}

function addParameter(candidate: OperationCandidate, name: string, value: string): void {
  candidate.parameters ??= [];
  const parameters = candidate.parameters;
  if (parameters.some((parameter) => parameter.in === "query" && parameter.name === name)) return;
  const parameter: Parameter = { name, in: "query", required: false, schema: scalarSchema(value) };
  if (!SECRET_NAME.test(name)) parameter.example = value;
  parameters.push(parameter);
}

function bodyOf(request: ObservedRequest): OperationCandidate["request_body"] {
  if (request.postData === undefined) return undefined;
  const contentType = (request.contentType ?? "text/plain").split(";")[0]!.trim().toLowerCase();
  const body: NonNullable<OperationCandidate["request_body"]> = { content_type: contentType, required: true };
  if (/json/.test(contentType)) {
    try {
      body.schema = schemaOfJson(JSON.parse(request.postData));
    } catch {
      // A body that says JSON and is not: its type is still worth knowing.
    }
  } else if (contentType === "application/x-www-form-urlencoded") {
    const properties: Record<string, unknown> = {};
    for (const [name, value] of new URLSearchParams(request.postData)) properties[name] = scalarSchema(value);
    body.schema = { type: "object", properties };
  } else if (contentType === "multipart/form-data") {
    const properties: Record<string, unknown> = {};
    for (const match of request.postData.matchAll(
      /content-disposition:\s*form-data;\s*name="([^"]*)"(;\s*filename=)?/gi,
    ))
      properties[match[1]!] = match[2] ? { type: "string", format: "binary" } : { type: "string" };
    body.schema = { type: "object", properties };
  }
  return body;
}

/** The shape of a JSON value: types and property names, never the values themselves. */
export function schemaOfJson(value: unknown, depth = 0): Record<string, unknown> {
  if (value === null) return {};
  if (Array.isArray(value)) {
    return depth > 4 || value.length === 0
      ? { type: "array" }
      : { type: "array", items: schemaOfJson(value[0], depth + 1) };
  }
  switch (typeof value) {
    case "string":
      return { type: "string" };
    case "number":
      return { type: Number.isInteger(value) ? "integer" : "number" };
    case "boolean":
      return { type: "boolean" };
    case "object": {
      if (depth > 4) return { type: "object" };
      const properties: Record<string, unknown> = {};
      for (const [name, inner] of Object.entries(value as Record<string, unknown>))
        properties[name] = schemaOfJson(inner, depth + 1);
      return { type: "object", properties };
    }
    default:
      return {};
  }
}

function scalarSchema(value: string): Record<string, unknown> {
  if (/^-?\d+$/.test(value)) return { type: "integer" };
  if (/^-?\d*\.\d+$/.test(value)) return { type: "number" };
  if (value === "true" || value === "false") return { type: "boolean" };
  return { type: "string" };
}
