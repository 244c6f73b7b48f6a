import type { Operation } from "../../map/system-map.ts";

// What OpenAPI 3.x and Swagger 2.0 documents share once dereferenced: the operation methods, security
// requirements, examples, and `$ref`s left in place by cycles.

export const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

export type JsonObject = Record<string, unknown>;

export type Expand = (schema: JsonObject | undefined) => JsonObject | undefined;

export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `/api/v1/` → `/api/v1`, `api` → `/api`, `/` → ``: a prefix to put before every path template. */
export function normaliseBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, "");
  if (trimmed === "") return "";
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/** A path template joined to a base path, whether or not the document wrote its leading slash. */
export function joinTemplate(basePath: string, template: string): string {
  return `${basePath}${template.startsWith("/") ? template : `/${template}`}`;
}

/**
 * `public` when the requirement list is empty or offers an empty alternative (`[{}]`: authentication
 * optional); `required` when every alternative names a scheme.
 */
export function securityOf(security: unknown): Operation["security"] {
  if (security === undefined || security === null) return "public";
  if (!Array.isArray(security)) return "unknown";
  if (security.length === 0) return "public";
  const optional = security.some((requirement) => {
    const object = asObject(requirement);
    return object !== undefined && Object.keys(object).length === 0;
  });
  return optional ? "public" : "required";
}

/** `declared_public` for a requirement list that is empty or offers an empty alternative. */
export function declaredPublic(security: unknown): Pick<Operation, "declared_public"> {
  return Array.isArray(security) && securityOf(security) === "public" ? { declared_public: true } : {};
}

/** The fields of an operation object both versions spell the same way. */
export function describedBy(operation: JsonObject): Pick<Operation, "operation_id" | "summary" | "tags"> {
  return {
    ...(typeof operation.operationId === "string" ? { operation_id: operation.operationId } : {}),
    ...(typeof operation.summary === "string" ? { summary: operation.summary } : {}),
    ...(Array.isArray(operation.tags)
      ? { tags: operation.tags.filter((tag): tag is string => typeof tag === "string") }
      : {}),
  };
}

/** `example`, the first of `examples`, Swagger's `x-example`, then the schema's own example. */
export function exampleOf(holder: JsonObject, schema: JsonObject | undefined): unknown {
  if (holder.example !== undefined) return holder.example;
  if (holder["x-example"] !== undefined) return holder["x-example"];
  const examples = asObject(holder.examples);
  const first = examples ? asObject(Object.values(examples)[0]) : undefined;
  if (first?.value !== undefined) return first.value;
  if (schema?.example !== undefined) return schema.example;
  const schemaExamples = schema?.examples;
  return Array.isArray(schemaExamples) && schemaExamples.length > 0 ? schemaExamples[0] : undefined;
}

/** A JSON media type (`application/json`, `application/problem+json`) or the wildcard. */
export function isJsonMediaType(type: string): boolean {
  return /^application\/(?:[\w.+-]+\+)?json\b|^\*\/\*$/i.test(type.trim());
}

/**
 * Dereferencing with `circular: "ignore"` leaves every reference to a schema that takes part in a cycle
 * as a `$ref`. Each operation gets those expanded once along each path (a repeat stays a `$ref`), so its
 * schemas are usable and still finite JSON.
 */
export function circularRefExpander(document: JsonObject): Expand {
  const lookup = (pointer: string): unknown => {
    let current: unknown = document;
    for (const raw of pointer.replace(/^#\//, "").split("/")) {
      const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      current = asObject(current)?.[key];
    }
    return current;
  };
  const expandValue = (value: unknown, stack: readonly string[], budget: { nodes: number }): unknown => {
    if (Array.isArray(value)) return value.map((item) => expandValue(item, stack, budget));
    const object = asObject(value);
    if (!object) return value;
    budget.nodes -= 1;
    const reference = object.$ref;
    if (typeof reference === "string" && reference.startsWith("#/")) {
      const target = lookup(reference);
      if (stack.includes(reference) || budget.nodes <= 0 || target === undefined) return object;
      return expandValue(target, [...stack, reference], budget);
    }
    return Object.fromEntries(
      Object.entries(object).map(([key, item]) => [key, expandValue(item, stack, budget)]),
    );
  };
  return (schema) => (schema ? (expandValue(schema, [], { nodes: 5_000 }) as JsonObject) : undefined);
}
