// Small helpers over the JSON schemas the system map carries (OpenAPI 3.0 or 3.1 flavoured, already
// dereferenced, possibly cyclic).

export type JsonSchema = Record<string, unknown>;

const MAX_DEPTH = 12;

/** A deep copy with cycles and excessive depth cut to `{}` (accept anything), safe to compile and walk. */
export function acyclicSchema(schema: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): JsonSchema {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return {};
  if (seen.has(schema) || depth > MAX_DEPTH) return {};
  seen.add(schema);
  const copy: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = copyValue(value, depth, seen);
  seen.delete(schema);
  return copy;
}

function copyValue(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (Array.isArray(value)) return value.map((item) => copyValue(item, depth + 1, seen));
  if (value && typeof value === "object") return acyclicSchema(value, depth + 1, seen);
  return value;
}

/** allOf merged into one schema (properties, required and constraints), so generation sees it whole. */
export function flattenSchema(schema: JsonSchema): JsonSchema {
  const allOf = schema.allOf;
  if (!Array.isArray(allOf)) return schema;
  const merged: JsonSchema = { ...schema };
  delete merged.allOf;
  for (const part of allOf) {
    const flat = flattenSchema(asSchema(part));
    for (const [key, value] of Object.entries(flat)) {
      if (key === "properties") merged.properties = { ...asSchema(merged.properties), ...asSchema(value) };
      else if (key === "required")
        merged.required = [...new Set([...asStrings(merged.required), ...asStrings(value)])];
      else if (merged[key] === undefined) merged[key] = value;
    }
  }
  return merged;
}

/** The branch to generate from: the first oneOf/anyOf option that is not just `null`. */
export function chooseBranch(schema: JsonSchema): JsonSchema {
  const flat = flattenSchema(schema);
  for (const key of ["oneOf", "anyOf"] as const) {
    const options = flat[key];
    if (Array.isArray(options) && options.length > 0) {
      const preferred =
        options.map(asSchema).find((option) => schemaType(option) !== "null") ?? asSchema(options[0]);
      const rest = { ...flat };
      delete rest[key];
      return chooseBranch({ ...rest, ...flattenSchema(preferred) });
    }
  }
  return flat;
}

export type SchemaType = "string" | "integer" | "number" | "boolean" | "array" | "object" | "null" | "any";

export function schemaType(schema: JsonSchema): SchemaType {
  const type = schema.type;
  if (typeof type === "string") return type as SchemaType;
  if (Array.isArray(type)) {
    const first = type.find((entry) => entry !== "null");
    return (first ?? "null") as SchemaType;
  }
  if (schema.properties || schema.additionalProperties) return "object";
  if (schema.items) return "array";
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const first = schema.enum[0];
    if (typeof first === "number") return Number.isInteger(first) ? "integer" : "number";
    if (typeof first === "boolean") return "boolean";
    return "string";
  }
  if (schema.const !== undefined) return typeof schema.const === "number" ? "number" : "string";
  return "any";
}

export function isNullable(schema: JsonSchema): boolean {
  if (schema.nullable === true) return true;
  if (Array.isArray(schema.type) && schema.type.includes("null")) return true;
  for (const key of ["oneOf", "anyOf"]) {
    const options = schema[key];
    if (Array.isArray(options) && options.some((option) => schemaType(asSchema(option)) === "null"))
      return true;
  }
  return Array.isArray(schema.enum) && schema.enum.includes(null);
}

export function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  const properties = asSchema(flattenSchema(schema).properties);
  const result: Record<string, JsonSchema> = {};
  for (const [name, value] of Object.entries(properties)) result[name] = asSchema(value);
  return result;
}

export function requiredOf(schema: JsonSchema): string[] {
  return asStrings(flattenSchema(schema).required);
}

/**
 * The schema as seen in one direction: a request never carries `readOnly` properties, a response never
 * carries `writeOnly` ones (a password), so neither is required there.
 */
export function forDirection(schema: JsonSchema, direction: "request" | "response"): JsonSchema {
  const hidden = direction === "request" ? "readOnly" : "writeOnly";
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== "object") return node;
    const copy: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) copy[key] = walk(value);
    if (copy.properties && typeof copy.properties === "object") {
      const properties = copy.properties as Record<string, JsonSchema>;
      const removed = Object.keys(properties).filter((name) => asSchema(properties[name])[hidden] === true);
      for (const name of removed) delete properties[name];
      if (Array.isArray(copy.required))
        copy.required = copy.required.filter((name) => !removed.includes(name as string));
    }
    return copy;
  };
  return walk(schema) as JsonSchema;
}

export function asSchema(value: unknown): JsonSchema {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as JsonSchema) : {};
}

function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

export function numberOf(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
