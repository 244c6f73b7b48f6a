import ts from "typescript";
import {
  literalValue,
  numberValue,
  propertyName,
  regexSource,
  staticString,
  unwrap,
} from "./javascript-syntax.ts";
import { type JsonSchema, objectSchema } from "./route-inputs.ts";

// What a validator's modifiers mean, whichever library wrote them: `.optional()`, `.min(3)` (a length, a
// bound or a count depending on the type), `.email()`, `.regex(/x/)`, `.valid("a", "b")`, `.extend({...})`.

/** One step of `root.a(x).b.c(y)`: a member name (`""` for a call of the root itself) and its arguments. */
export interface Step {
  name: string;
  args?: readonly ts.Expression[];
}

/** A field schema and whether the library makes the field required in its object. */
export interface FieldSchema {
  schema: JsonSchema;
  required: boolean;
}

/** How modifiers read the schemas they are handed, in the dialect and file they are written in. */
export interface FieldReader {
  constants: ReadonlyMap<string, string>;
  field(expression: ts.Expression): FieldSchema | undefined;
  object(argument: ts.Expression | undefined): JsonSchema;
}

export const FORMATS: Record<string, string> = {
  email: "email",
  uuid: "uuid",
  guid: "uuid",
  url: "uri",
  uri: "uri",
  datetime: "date-time",
  isoDate: "date-time",
  ip: "ipv4",
  ipv4: "ipv4",
  ipv6: "ipv6",
  hostname: "hostname",
};

/** Modifiers after the type call: bounds, formats, optionality, array and object transformations. */
export function applyModifiers(field: FieldSchema, steps: Step[], reader: FieldReader): FieldSchema {
  let schema: JsonSchema = { ...field.schema };
  let required = field.required;
  for (const step of steps) {
    const args = step.args ?? [];
    const isString = schema.type === "string";
    const isArray = schema.type === "array";
    switch (step.name) {
      case "optional":
      case "nullish":
      case "default":
      case "catch":
      case "allow":
        if (step.name !== "allow" || args.some((argument) => numberValue(argument) === undefined))
          required = false;
        break;
      case "required":
      case "nonempty":
      case "defined":
      case "exist":
      case "exists":
        required = true;
        if (step.name === "nonempty") schema[isArray ? "minItems" : "minLength"] = 1;
        break;
      case "int":
      case "integer":
        schema.type = "integer";
        break;
      case "positive":
        schema.exclusiveMinimum = 0;
        break;
      case "nonnegative":
        schema.minimum = 0;
        break;
      case "min":
      case "gte":
      case "max":
      case "lte":
      case "length":
      case "gt":
      case "lt":
      case "greater":
      case "less": {
        const bound = numberValue(args[0]);
        if (bound === undefined) break;
        const lower = ["min", "gte", "gt", "greater"].includes(step.name);
        const exclusive = ["gt", "lt", "greater", "less"].includes(step.name);
        if (step.name === "length") {
          schema[isArray ? "minItems" : "minLength"] = bound;
          schema[isArray ? "maxItems" : "maxLength"] = bound;
        } else if (isString) schema[lower ? "minLength" : "maxLength"] = bound;
        else if (isArray) schema[lower ? "minItems" : "maxItems"] = bound;
        else
          schema[
            exclusive ? (lower ? "exclusiveMinimum" : "exclusiveMaximum") : lower ? "minimum" : "maximum"
          ] = bound;
        break;
      }
      case "regex":
      case "pattern":
      case "matches": {
        const pattern = regexSource(args[0], reader.constants);
        if (pattern !== undefined) schema.pattern = pattern;
        break;
      }
      case "valid":
      case "only":
      case "oneOf":
      case "equal": {
        const values = (
          args.length === 1 && ts.isArrayLiteralExpression(unwrap(args[0]!))
            ? (unwrap(args[0]!) as ts.ArrayLiteralExpression).elements
            : args
        )
          .map((argument) => literalValue(argument, reader.constants))
          .filter((entry) => entry !== undefined);
        if (values.length > 0) schema.enum = values;
        break;
      }
      case "items":
      case "of": {
        const items = args[0] ? reader.field(args[0])?.schema : undefined;
        if (items) schema.items = items;
        break;
      }
      case "array":
        schema = { type: "array", items: schema };
        break;
      case "keys":
      case "shape":
      case "extend":
      case "append": {
        const extra = reader.object(args[0]);
        schema = mergeObjectLiterals(schema, extra);
        break;
      }
      case "merge": {
        const other = args[0] ? reader.field(args[0])?.schema : undefined;
        if (other) schema = mergeObjectLiterals(schema, other);
        break;
      }
      case "partial":
        delete schema.required;
        break;
      case "pick":
      case "omit": {
        const names = new Set(objectKeys(args[0]));
        const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
        const keep = (name: string): boolean => (step.name === "pick" ? names.has(name) : !names.has(name));
        schema.properties = Object.fromEntries(Object.entries(properties).filter(([name]) => keep(name)));
        if (Array.isArray(schema.required)) schema.required = (schema.required as string[]).filter(keep);
        break;
      }
      case "describe":
      case "description": {
        const text = staticString(args[0], reader.constants);
        if (text !== undefined) schema.description = text;
        break;
      }
      default:
        if (step.name in FORMATS && (isString || schema.type === undefined)) {
          schema.type = "string";
          schema.format = FORMATS[step.name];
        }
    }
  }
  return { schema, required };
}

function mergeObjectLiterals(left: JsonSchema, right: JsonSchema): JsonSchema {
  const required = [
    ...((left.required as string[] | undefined) ?? []),
    ...((right.required as string[] | undefined) ?? []),
  ];
  return objectSchema(
    {
      ...((left.properties ?? {}) as Record<string, JsonSchema>),
      ...((right.properties ?? {}) as Record<string, JsonSchema>),
    },
    required,
  );
}

function objectKeys(argument: ts.Expression | undefined): string[] {
  const value = argument && unwrap(argument);
  if (!value || !ts.isObjectLiteralExpression(value)) return [];
  return value.properties.flatMap((property) => {
    const name = property.name ? propertyName(property.name) : undefined;
    return name === undefined ? [] : [name];
  });
}
