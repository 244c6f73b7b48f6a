import type { Operation } from "../../map/system-map.ts";

// Flattens a dereferenced OpenAPI 3.x document into one Operation per path × method, with paths made
// absolute on the server (the first server's path is the base path).

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
const PARAMETER_LOCATIONS = new Set(["path", "query", "header", "cookie"]);

type JsonObject = Record<string, unknown>;

export interface OperationsOptions {
  /** Overrides the base path taken from `servers[0].url` (a profile's `api.base_path`). */
  basePath?: string;
}

export function operationsFromOpenApi(document: JsonObject, options: OperationsOptions = {}): Operation[] {
  const expand = circularRefExpander(document);
  const basePath = normaliseBasePath(options.basePath ?? serverBasePath(document));
  const globalSecurity = document.security;
  const paths = asObject(document.paths) ?? {};
  const operations: Operation[] = [];
  for (const [template, rawItem] of Object.entries(paths)) {
    const item = asObject(rawItem);
    if (!item) continue;
    const pathParameters = asArray(item.parameters);
    for (const method of METHODS) {
      const operation = asObject(item[method]);
      if (!operation) continue;
      const security = operation.security !== undefined ? operation.security : globalSecurity;
      operations.push({
        method: method.toUpperCase(),
        path: `${basePath}${template.startsWith("/") ? template : `/${template}`}`,
        ...(typeof operation.operationId === "string" ? { operation_id: operation.operationId } : {}),
        ...(typeof operation.summary === "string" ? { summary: operation.summary } : {}),
        ...(Array.isArray(operation.tags)
          ? { tags: operation.tags.filter((tag) => typeof tag === "string") }
          : {}),
        security: securityOf(security),
        parameters: mergeParameters(pathParameters, asArray(operation.parameters), expand),
        ...requestBodyOf(asObject(operation.requestBody), expand),
        responses: responsesOf(asObject(operation.responses), expand),
        seen_in: ["openapi"],
        documented: true,
      });
    }
  }
  return operations;
}

/** The path part of `servers[0].url` (variables filled with their defaults), e.g. `/api/v1`. */
export function serverBasePath(document: JsonObject): string {
  const server = asObject(asArray(document.servers)[0]);
  if (!server || typeof server.url !== "string") return "";
  const variables = asObject(server.variables) ?? {};
  const url = server.url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const fallback = asObject(variables[name])?.default;
    return typeof fallback === "string" ? fallback : whole;
  });
  try {
    return new URL(url).pathname;
  } catch {
    // A relative server URL (`/api`) is a path on the host serving the document.
    return url.startsWith("/") ? (url.split(/[?#]/)[0] ?? "") : "";
  }
}

function normaliseBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, "");
  if (trimmed === "") return "";
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/**
 * `public` when the requirement list is empty or offers an empty alternative (`[{}]`: authentication
 * optional); `required` when every alternative names a scheme.
 */
function securityOf(security: unknown): Operation["security"] {
  if (security === undefined || security === null) return "public";
  if (!Array.isArray(security)) return "unknown";
  if (security.length === 0) return "public";
  const optional = security.some((requirement) => {
    const object = asObject(requirement);
    return object !== undefined && Object.keys(object).length === 0;
  });
  return optional ? "public" : "required";
}

type Expand = (schema: JsonObject | undefined) => JsonObject | undefined;

function mergeParameters(
  pathLevel: unknown[],
  operationLevel: unknown[],
  expand: Expand,
): Operation["parameters"] {
  // Operation-level parameters override path-level ones with the same name and location.
  const merged = new Map<string, Operation["parameters"][number]>();
  for (const raw of [...pathLevel, ...operationLevel]) {
    const parameter = asObject(raw);
    if (!parameter || typeof parameter.name !== "string" || typeof parameter.in !== "string") continue;
    if (!PARAMETER_LOCATIONS.has(parameter.in)) continue;
    const location = parameter.in as Operation["parameters"][number]["in"];
    const content = firstMedia(asObject(parameter.content));
    const schema = expand(asObject(parameter.schema) ?? asObject(content?.media.schema));
    const example =
      exampleOf(parameter, schema) ?? (content ? exampleOf(content.media, undefined) : undefined);
    merged.set(`${location}:${parameter.name}`, {
      name: parameter.name,
      in: location,
      required: location === "path" ? true : parameter.required === true,
      ...(schema ? { schema } : {}),
      ...(example !== undefined ? { example } : {}),
    });
  }
  return [...merged.values()];
}

function requestBodyOf(body: JsonObject | undefined, expand: Expand): Pick<Operation, "request_body"> {
  const media = firstMedia(asObject(body?.content));
  if (!body || !media) return {};
  const schema = expand(asObject(media.media.schema));
  const example = exampleOf(media.media, schema);
  return {
    request_body: {
      content_type: media.type,
      required: body.required === true,
      ...(schema ? { schema } : {}),
      ...(example !== undefined ? { example } : {}),
    },
  };
}

function responsesOf(responses: JsonObject | undefined, expand: Expand): Operation["responses"] {
  const result: Operation["responses"] = {};
  for (const [status, raw] of Object.entries(responses ?? {})) {
    const media = firstMedia(asObject(asObject(raw)?.content), true);
    const schema = expand(asObject(media?.media.schema));
    result[status] = schema ? { schema } : {};
  }
  return result;
}

/** The first JSON media type (`application/json`, `…+json`), else the first one at all unless `jsonOnly`. */
function firstMedia(
  content: JsonObject | undefined,
  jsonOnly = false,
): { type: string; media: JsonObject } | undefined {
  if (!content) return undefined;
  const entries = Object.entries(content).filter(
    (entry): entry is [string, JsonObject] => asObject(entry[1]) !== undefined,
  );
  const json = entries.find(([type]) => /^application\/(?:[\w.+-]+\+)?json\b|^\*\/\*$/i.test(type));
  const chosen = json ?? (jsonOnly ? undefined : entries[0]);
  return chosen ? { type: chosen[0], media: chosen[1] } : undefined;
}

function exampleOf(holder: JsonObject, schema: JsonObject | undefined): unknown {
  if (holder.example !== undefined) return holder.example;
  const examples = asObject(holder.examples);
  const first = examples ? asObject(Object.values(examples)[0]) : undefined;
  if (first?.value !== undefined) return first.value;
  if (schema?.example !== undefined) return schema.example;
  const schemaExamples = schema?.examples;
  return Array.isArray(schemaExamples) && schemaExamples.length > 0 ? schemaExamples[0] : undefined;
}

/**
 * Dereferencing with `circular: "ignore"` leaves every reference to a schema that takes part in a cycle
 * as a `$ref`. Each operation gets those expanded once along each path (a repeat stays a `$ref`), so its
 * schemas are usable and still finite JSON.
 */
function circularRefExpander(document: JsonObject): Expand {
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

function asObject(value: unknown): JsonObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
