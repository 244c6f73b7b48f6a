import type { Operation } from "../../map/system-map.ts";
import {
  asArray,
  asObject,
  circularRefExpander,
  declaredPublic,
  describedBy,
  type Expand,
  exampleOf,
  isJsonMediaType,
  type JsonObject,
  joinTemplate,
  METHODS,
  normaliseBasePath,
  securityOf,
} from "./document-objects.ts";
import { isSwagger2, operationsFromSwagger2 } from "./operations-from-swagger2.ts";

// Flattens a dereferenced OpenAPI 3.x document into one Operation per path × method, with paths made
// absolute on the server (the first server's path is the base path). Swagger 2.0 documents are read by
// their own flattener and come out in the same shape.

const PARAMETER_LOCATIONS = new Set(["path", "query", "header", "cookie"]);

export interface OperationsOptions {
  /** Overrides the base path taken from `servers[0].url` (or Swagger's `basePath`): a profile's `api.base_path`. */
  basePath?: string;
}

export function operationsFromOpenApi(document: JsonObject, options: OperationsOptions = {}): Operation[] {
  if (isSwagger2(document)) return operationsFromSwagger2(document, options);
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
        path: joinTemplate(basePath, template),
        ...describedBy(operation),
        security: securityOf(security),
        ...declaredPublic(security),
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
  const json = entries.find(([type]) => isJsonMediaType(type));
  const chosen = json ?? (jsonOnly ? undefined : entries[0]);
  return chosen ? { type: chosen[0], media: chosen[1] } : undefined;
}
