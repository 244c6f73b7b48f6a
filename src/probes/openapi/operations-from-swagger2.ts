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

// Flattens a dereferenced Swagger 2.0 document into the same Operations an OpenAPI 3.x document gives.
// Swagger spells things differently: `basePath` instead of servers, parameter types written inline,
// the body as an `in: body` parameter or as `in: formData` fields encoded per `consumes`, response schemas
// without media types (`produces` says whether they are JSON), `securityDefinitions` for schemes.

/** JSON Schema keywords a Swagger 2.0 non-body parameter writes on itself instead of under `schema`. */
const INLINE_SCHEMA_KEYS = [
  "type",
  "format",
  "items",
  "enum",
  "default",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "uniqueItems",
  "multipleOf",
] as const;

const URLENCODED = "application/x-www-form-urlencoded";
const MULTIPART = "multipart/form-data";

export function isSwagger2(document: JsonObject): boolean {
  return typeof document.swagger === "string" && document.swagger.startsWith("2.");
}

export function operationsFromSwagger2(
  document: JsonObject,
  options: { basePath?: string } = {},
): Operation[] {
  const expand = circularRefExpander(document);
  const schemaOf: Expand = (schema) => swaggerSchema(expand(schema));
  // No `host` is normal: paths are then on whichever host serves the document, which is all the map needs.
  const basePath = normaliseBasePath(
    options.basePath ?? (typeof document.basePath === "string" ? document.basePath : ""),
  );
  const operations: Operation[] = [];
  for (const [template, rawItem] of Object.entries(asObject(document.paths) ?? {})) {
    const item = asObject(rawItem);
    if (!item) continue;
    for (const method of METHODS) {
      const operation = asObject(item[method]);
      if (!operation) continue;
      const parameters = mergeSwaggerParameters(asArray(item.parameters), asArray(operation.parameters));
      const consumes = mediaTypes(operation.consumes ?? document.consumes);
      const produces = mediaTypes(operation.produces ?? document.produces);
      const security = operation.security !== undefined ? operation.security : document.security;
      operations.push({
        method: method.toUpperCase(),
        path: joinTemplate(basePath, template),
        ...describedBy(operation),
        security: securityOf(security),
        ...declaredPublic(security),
        parameters: plainParameters(parameters, schemaOf),
        ...bodyOf(parameters, consumes, schemaOf),
        responses: responsesOf(asObject(operation.responses), produces, schemaOf),
        seen_in: ["openapi"],
        documented: true,
      });
    }
  }
  return operations;
}

/** Operation-level parameters override path-level ones with the same name and location. */
function mergeSwaggerParameters(pathLevel: unknown[], operationLevel: unknown[]): JsonObject[] {
  const merged = new Map<string, JsonObject>();
  for (const raw of [...pathLevel, ...operationLevel]) {
    const parameter = asObject(raw);
    if (!parameter || typeof parameter.name !== "string" || typeof parameter.in !== "string") continue;
    merged.set(`${parameter.in}:${parameter.name}`, parameter);
  }
  return [...merged.values()];
}

/** Path, query and header parameters (Swagger 2.0 has no cookie parameters). */
function plainParameters(parameters: JsonObject[], schemaOf: Expand): Operation["parameters"] {
  const result: Operation["parameters"] = [];
  for (const parameter of parameters) {
    const location = parameter.in;
    if (location !== "path" && location !== "query" && location !== "header") continue;
    const schema = schemaOf(inlineSchema(parameter));
    const example = exampleOf(parameter, schema);
    result.push({
      name: parameter.name as string,
      in: location,
      required: location === "path" ? true : parameter.required === true,
      ...(schema ? { schema } : {}),
      ...(example !== undefined ? { example } : {}),
    });
  }
  return result;
}

/**
 * The request body: an `in: body` parameter's schema sent as the first JSON type `consumes` allows, or the
 * `in: formData` fields as one object, multipart when a field is a file or `consumes` offers only that.
 */
function bodyOf(
  parameters: JsonObject[],
  consumes: string[],
  schemaOf: Expand,
): Pick<Operation, "request_body"> {
  const body = parameters.find((parameter) => parameter.in === "body");
  if (body) {
    const schema = schemaOf(asObject(body.schema));
    const example = exampleOf(body, schema);
    return {
      request_body: {
        content_type: consumes.find(isJsonMediaType) ?? consumes[0] ?? "application/json",
        required: body.required === true,
        ...(schema ? { schema } : {}),
        ...(example !== undefined ? { example } : {}),
      },
    };
  }
  const fields = parameters.filter((parameter) => parameter.in === "formData");
  if (fields.length === 0) return {};
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const field of fields) {
    const name = field.name as string;
    properties[name] = schemaOf(inlineSchema(field)) ?? {};
    if (field.required === true) required.push(name);
  }
  const hasFile = fields.some((field) => field.type === "file");
  const multipart = hasFile || (consumes.includes(MULTIPART) && !consumes.includes(URLENCODED));
  return {
    request_body: {
      content_type: multipart ? MULTIPART : URLENCODED,
      required: required.length > 0,
      schema: { type: "object", properties, ...(required.length > 0 ? { required } : {}) },
    },
  };
}

/** Response schemas, kept only when the operation may answer JSON (no `produces` means it may). */
function responsesOf(
  responses: JsonObject | undefined,
  produces: string[],
  schemaOf: Expand,
): Operation["responses"] {
  const answersJson = produces.length === 0 || produces.some(isJsonMediaType);
  const result: Operation["responses"] = {};
  for (const [status, raw] of Object.entries(responses ?? {})) {
    const schema = answersJson ? schemaOf(asObject(asObject(raw)?.schema)) : undefined;
    result[status] = schema ? { schema } : {};
  }
  return result;
}

function inlineSchema(parameter: JsonObject): JsonObject | undefined {
  const schema: JsonObject = {};
  for (const key of INLINE_SCHEMA_KEYS) if (parameter[key] !== undefined) schema[key] = parameter[key];
  return Object.keys(schema).length > 0 ? schema : undefined;
}

function mediaTypes(value: unknown): string[] {
  return asArray(value).filter((type): type is string => typeof type === "string");
}

/**
 * Swagger's schema dialect in the JSON Schema the probes validate with: `type: file` is a binary string and
 * `x-nullable: true` is OpenAPI 3.0's `nullable`, which the response validator already understands.
 */
function swaggerSchema(schema: JsonObject | undefined): JsonObject | undefined {
  if (!schema) return undefined;
  const convert = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(convert);
    const object = asObject(value);
    if (!object) return value;
    const converted: JsonObject = {};
    for (const [key, item] of Object.entries(object)) {
      if (key === "x-nullable") {
        if (item === true) converted.nullable = true;
        continue;
      }
      converted[key] = key === "enum" || key === "example" || key === "default" ? item : convert(item);
    }
    if (converted.type === "file") {
      converted.type = "string";
      converted.format = "binary";
    }
    return converted;
  };
  return convert(schema) as JsonObject;
}
