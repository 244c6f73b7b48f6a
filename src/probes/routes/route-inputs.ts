import type { Parameter, Route } from "../../map/system-map.ts";

// What a route's handler reads from a request — query, header and cookie parameters and the body's fields —
// merged from every place that says something about it: reads in the handler (weak: a name, maybe a type
// from `parseInt`), and validators, annotations or schemas (strong: they say what the app accepts).

export type JsonSchema = Record<string, unknown>;
export type ParameterLocation = "query" | "header" | "cookie";
export type BodyEncoding = "json" | "form" | "multipart";

export const CONTENT_TYPES: Record<BodyEncoding, string> = {
  json: "application/json",
  form: "application/x-www-form-urlencoded",
  multipart: "multipart/form-data",
};

/** Headers an HTTP client sets itself to frame the message: not inputs a caller chooses. */
const FRAMING_HEADERS = new Set(["content-length", "host", "connection", "transfer-encoding"]);

/** What one route reads, in the map's shape. */
export interface RouteInputs {
  parameters?: Parameter[];
  request_body?: NonNullable<Route["request_body"]>;
}

/** Schemas guessed from reads alone: a validator's or an annotation's schema replaces them. */
const guessed = new WeakSet<object>();

/** A schema learned from a read (`req.query.page`), not from a declaration; `{ type: "string" }` by default. */
export function guessedSchema(schema: JsonSchema = { type: "string" }): JsonSchema {
  guessed.add(schema);
  return schema;
}

export function isGuessed(schema: JsonSchema | undefined): boolean {
  return schema !== undefined && guessed.has(schema);
}

/** Collects reads and declarations for one route (or one handler) and answers them as `RouteInputs`. */
export class RouteInputsBuilder {
  private readonly parameters = new Map<string, Parameter>();
  private body: JsonSchema | undefined;
  private readonly encodings = new Set<BodyEncoding>();

  parameter(location: ParameterLocation, name: string, schema?: JsonSchema, required = false): this {
    if (name === "" || (location === "header" && FRAMING_HEADERS.has(name.toLowerCase()))) return this;
    const key = `${location} ${location === "header" ? name.toLowerCase() : name}`;
    const incoming = schema ?? guessedSchema();
    const existing = this.parameters.get(key);
    if (!existing) {
      this.parameters.set(key, { name, in: location, required, schema: incoming });
      return this;
    }
    existing.schema = mergeSchemas(existing.schema, incoming);
    existing.required ||= required;
    return this;
  }

  /** A field of the body at `path` (`["address", "city"]` for `req.body.address.city`). */
  bodyField(path: readonly string[], schema?: JsonSchema, required = false): this {
    if (path.length === 0 || path[0] === "[]" || path.some((segment) => segment === "")) return this;
    let leaf = schema ?? guessedSchema();
    for (let index = path.length - 1; index > 0; index -= 1) {
      const segment = path[index] as string;
      if (segment === "[]") {
        leaf = guessedSchema({ type: "array", items: leaf });
        continue;
      }
      const wrapper = guessedSchema({ type: "object", properties: { [segment]: leaf } });
      if (index === path.length - 1 && required) wrapper.required = [segment];
      leaf = wrapper;
    }
    const top = objectSchema({ [path[0] as string]: leaf }, required && path.length === 1 ? [path[0]!] : []);
    guessed.add(top);
    this.body = mergeSchemas(this.body, top);
    return this;
  }

  /** A whole body schema (a validator's, a model's): its properties win over guessed reads. */
  bodySchema(schema: JsonSchema): this {
    this.body = mergeSchemas(this.body, schema);
    return this;
  }

  /** An object schema's properties as parameters (a validator on `req.query`, a query DTO). */
  parametersFrom(location: ParameterLocation, schema: JsonSchema): this {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, property] of Object.entries(properties))
      this.parameter(location, name, property, required.has(name));
    return this;
  }

  encoding(encoding: BodyEncoding): this {
    this.encodings.add(encoding);
    return this;
  }

  /** Whether any read or declaration touched the body (a body may be read whole, with no field named). */
  readsBody(): this {
    this.body ??= guessedSchema({ type: "object", properties: {} });
    return this;
  }

  merge(inputs: RouteInputs | undefined): this {
    if (!inputs) return this;
    for (const parameter of inputs.parameters ?? []) {
      if (parameter.in === "path") continue;
      this.parameter(parameter.in, parameter.name, parameter.schema, parameter.required);
    }
    const body = inputs.request_body;
    if (body) {
      this.body = mergeSchemas(this.body, body.schema);
      const encoding = encodingOf(body.content_type);
      if (encoding) this.encodings.add(encoding);
    }
    return this;
  }

  build(): RouteInputs {
    const inputs: RouteInputs = {};
    if (this.parameters.size > 0) inputs.parameters = [...this.parameters.values()];
    if (this.body) {
      // Files can only travel in a multipart body; otherwise one encoding seen is the one to send.
      const encoding = this.encodings.has("multipart")
        ? "multipart"
        : this.encodings.size === 1
          ? [...this.encodings][0]
          : undefined;
      inputs.request_body = {
        ...(encoding ? { content_type: CONTENT_TYPES[encoding] } : {}),
        schema: this.body,
      };
    }
    return inputs;
  }
}

export function encodingOf(contentType: string | undefined): BodyEncoding | undefined {
  if (!contentType) return undefined;
  if (contentType.includes("json")) return "json";
  if (contentType.includes("multipart")) return "multipart";
  if (contentType.includes("urlencoded")) return "form";
  return undefined;
}

export function objectSchema(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return required.length > 0
    ? { type: "object", properties, required: [...new Set(required)] }
    : { type: "object", properties };
}

/**
 * Two schemas for the same value. A declared schema wins over a guessed one; two of a kind are combined:
 * object properties united (recursively), and a specific guessed type (`integer` from `parseInt`) wins
 * over the default `string`.
 */
export function mergeSchemas(left: JsonSchema | undefined, right: JsonSchema | undefined): JsonSchema {
  if (!left || !right) return (left ?? right) as JsonSchema;
  const leftGuessed = isGuessed(left);
  const rightGuessed = isGuessed(right);
  if (isObjectSchema(left) && isObjectSchema(right)) return mergeObjects(left, right);
  if (left.type === "array" && right.type === "array") {
    const base = leftGuessed && !rightGuessed ? right : left;
    const items = mergeSchemas(left.items as JsonSchema | undefined, right.items as JsonSchema | undefined);
    const merged = items ? { ...base, items } : { ...base };
    if (leftGuessed && rightGuessed) guessed.add(merged);
    return merged;
  }
  if (leftGuessed && !rightGuessed) return right;
  if (rightGuessed && !leftGuessed) return left;
  if (leftGuessed && rightGuessed) {
    if (isObjectSchema(right)) return right;
    if (left.type === "string" && right.type !== undefined) return right;
    // `Number.isInteger(n) && n < 10`: the whole-number check is the narrower of the two.
    if (left.type === "number" && right.type === "integer") return right;
  }
  return left;
}

function isObjectSchema(schema: JsonSchema): boolean {
  return schema.type === "object" || (schema.type === undefined && schema.properties !== undefined);
}

function mergeObjects(left: JsonSchema, right: JsonSchema): JsonSchema {
  const leftGuessed = isGuessed(left);
  const rightGuessed = isGuessed(right);
  // The declared object's own keywords (additionalProperties, description) survive the merge.
  const base = leftGuessed && !rightGuessed ? right : left;
  const leftProperties = (left.properties ?? {}) as Record<string, JsonSchema>;
  const rightProperties = (right.properties ?? {}) as Record<string, JsonSchema>;
  const properties: Record<string, JsonSchema> = { ...leftProperties };
  for (const [name, schema] of Object.entries(rightProperties))
    properties[name] = mergeSchemas(properties[name], schema);
  const required = [
    ...((left.required as string[] | undefined) ?? []),
    ...((right.required as string[] | undefined) ?? []),
  ];
  const merged: JsonSchema = { ...base, type: "object", properties };
  if (required.length > 0) merged.required = [...new Set(required)];
  else delete merged.required;
  if (leftGuessed && rightGuessed) guessed.add(merged);
  return merged;
}
