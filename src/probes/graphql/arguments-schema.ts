import type { IntrospectionInputValue, IntrospectionType, IntrospectionTypeRef } from "graphql";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import { isRequiredInput, typeString } from "./type-refs.ts";

// A GraphQL field's arguments as the JSON Schema of its `variables` object: what every probe that fills
// and mutates a request body already understands, so GraphQL operations are filled and fuzzed like any
// JSON API without a GraphQL-specific generator.

/** How many levels of nested input objects are spelled out; deeper ones accept any object. */
const INPUT_DEPTH = 3;

const INT32 = { minimum: -2147483648, maximum: 2147483647 };

/** `{ type: object, properties: { <argument>: schema }, required: [...] }` for a field's arguments. */
export function argumentsSchema(
  args: readonly IntrospectionInputValue[],
  types: ReadonlyMap<string, IntrospectionType>,
): JsonSchema {
  return objectOf(args, types, 0);
}

function objectOf(
  values: readonly IntrospectionInputValue[],
  types: ReadonlyMap<string, IntrospectionType>,
  depth: number,
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const value of values) {
    properties[value.name] = withDescription(refSchema(value.type, types, depth), value.type);
    if (isRequiredInput(value)) required.push(value.name);
  }
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}

function withDescription(schema: JsonSchema, ref: IntrospectionTypeRef): JsonSchema {
  return { ...schema, description: `GraphQL ${typeString(ref)}` };
}

function refSchema(
  ref: IntrospectionTypeRef | undefined,
  types: ReadonlyMap<string, IntrospectionType>,
  depth: number,
): JsonSchema {
  if (!ref) return {};
  if (ref.kind === "NON_NULL")
    return refSchema((ref as { ofType?: IntrospectionTypeRef }).ofType, types, depth);
  if (ref.kind === "LIST")
    return {
      type: "array",
      items: refSchema((ref as { ofType?: IntrospectionTypeRef }).ofType, types, depth),
    };
  const name = (ref as { name?: string }).name;
  const type = name ? types.get(name) : undefined;
  if (type?.kind === "ENUM") return { type: "string", enum: type.enumValues.map((value) => value.name) };
  if (type?.kind === "INPUT_OBJECT") {
    if (depth >= INPUT_DEPTH) return { type: "object" };
    return objectOf(type.inputFields, types, depth + 1);
  }
  return scalarSchema(name ?? "");
}

/** Built-in scalars exactly; custom scalars by what their name usually means (a DateTime is a string). */
export function scalarSchema(name: string): JsonSchema {
  switch (name) {
    case "ID":
    case "String":
      return { type: "string" };
    case "Int":
      return { type: "integer", ...INT32 };
    case "Float":
      return { type: "number" };
    case "Boolean":
      return { type: "boolean" };
  }
  const lower = name.toLowerCase();
  if (/^(json|jsonobject|jsonstring|object|any|map|generic|genericscalar)$/.test(lower)) return {};
  if (/datetime|timestamp|instant/.test(lower)) return { type: "string", format: "date-time" };
  if (/^date$|^localdate$/.test(lower)) return { type: "string", format: "date" };
  if (/^time$|^localtime$/.test(lower)) return { type: "string", format: "time" };
  if (/email/.test(lower)) return { type: "string", format: "email" };
  if (/uuid|guid/.test(lower)) return { type: "string", format: "uuid" };
  if (/^ur[il]$/.test(lower)) return { type: "string", format: "uri" };
  if (/^(long|bigint|int64|short|byte|positiveint|nonnegativeint|unsignedint)$/.test(lower))
    return { type: "integer" };
  if (/^(decimal|bigdecimal|double|float64|money|currency)$/.test(lower)) return { type: "number" };
  return { type: "string" };
}
