import type { DocResponse, Endpoint, JsonSchema } from "./endpoint.ts";

// JSON Schema and response fragments the builders document their operations with.

export const INT: JsonSchema = { type: "integer" };
export const STR: JsonSchema = { type: "string" };
export const BOOL: JsonSchema = { type: "boolean" };

export function obj(
  properties: Record<string, JsonSchema>,
  required: string[] = Object.keys(properties),
): JsonSchema {
  return { type: "object", properties, required };
}

export const ERROR = obj({ error: STR });

export function listOf(item: JsonSchema): JsonSchema {
  return obj({ items: { type: "array", items: item } });
}

export function json(description: string, schema: JsonSchema): DocResponse {
  return { description, contentType: "application/json", schema };
}

export function htmlAnswer(description: string): DocResponse {
  return { description, contentType: "text/html", schema: STR };
}

export function err(description: string): DocResponse {
  return json(description, ERROR);
}

/** The 401 (and 403 for admin operations) every protected operation documents. */
export function guarded(access: Endpoint["access"]): Record<string, DocResponse> {
  if (access === "public") return {};
  const answers: Record<string, DocResponse> = { "401": err("no or invalid credentials") };
  if (access === "admin") answers["403"] = err("the caller is not an administrator");
  return answers;
}

/** A record of the shared `records` table as most variants answer it. */
export const RECORD = obj({ id: INT, uid: STR, title: STR, status: STR, owner_id: INT });

export const PRODUCT = obj({ id: INT, sku: STR, name: STR, price: INT });
