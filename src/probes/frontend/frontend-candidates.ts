import type { OperationCandidate } from "../../map/inventory.ts";
import type { Parameter } from "../../map/system-map.ts";
import type { ApiCall } from "./api-calls.ts";

// The frontend's requests as inventory candidates: one per method and path template (parameter names
// aside), with the query parameters and body fields every call to it showed.

export function candidatesFromApiCalls(calls: readonly ApiCall[]): OperationCandidate[] {
  const byKey = new Map<string, OperationCandidate>();
  for (const call of calls) {
    const key = `${call.method} ${call.path.replace(/\{[^}]*\}/g, "{}")}`;
    const candidate = byKey.get(key) ?? {
      method: call.method,
      path: call.path,
      provenance: "frontend" as const,
      // A path with no hole may still hold an id written in the code (`/api/users/1`).
      concrete: !call.path.includes("{"),
    };
    byKey.set(key, candidate);
    for (const entry of call.query) {
      candidate.parameters ??= [];
      const parameters = candidate.parameters;
      if (parameters.some((parameter) => parameter.in === "query" && parameter.name === entry.name)) continue;
      const parameter: Parameter = {
        name: entry.name,
        in: "query",
        required: false,
        schema: { type: "string" },
      };
      if (entry.example !== undefined) parameter.example = entry.example;
      parameters.push(parameter);
    }
    if (call.body) {
      const current = candidate.request_body;
      if (!current) {
        candidate.request_body = {
          content_type: call.body.contentType,
          required: true,
          ...(call.body.schema ? { schema: call.body.schema } : {}),
        };
      } else if (call.body.schema) {
        current.schema = unionSchemas(current.schema, call.body.schema);
      }
    }
  }
  return [...byKey.values()];
}

function unionSchemas(
  first: Record<string, unknown> | undefined,
  second: Record<string, unknown>,
): Record<string, unknown> {
  if (!first) return second;
  const properties = {
    ...(second.properties as Record<string, unknown> | undefined),
    ...(first.properties as Record<string, unknown> | undefined),
  };
  return { ...first, properties };
}
