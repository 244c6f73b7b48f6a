import ts from "typescript";
import { literalValue, propertyName, unwrap } from "./javascript-syntax.ts";
import {
  applyModifiers,
  type FieldReader,
  type FieldSchema,
  FORMATS,
  type Step,
} from "./javascript-validator-modifiers.ts";
import { type JsonSchema, objectSchema } from "./route-inputs.ts";

// Validation schemas written in code, read as JSON Schema without running anything: zod, joi (and
// celebrate's re-export), yup, TypeBox, and JSON Schema object literals (Fastify's `schema: { body,
// querystring }`). Modifiers are read in javascript-validator-modifiers.ts, express-validator chains in
// javascript-express-validator.ts.

export type ValidatorDialect = "zod" | "joi" | "yup" | "typebox" | "express-validator";

const DIALECT_OF_PACKAGE: Record<string, ValidatorDialect> = {
  zod: "zod",
  joi: "joi",
  "@hapi/joi": "joi",
  celebrate: "joi",
  yup: "yup",
  "@sinclair/typebox": "typebox",
  typebox: "typebox",
  "express-validator": "express-validator",
};

/** Names commonly bound to a library even when the import was not seen (a re-export, a global). */
const DIALECT_OF_NAME: Record<string, ValidatorDialect> = {
  z: "zod",
  Joi: "joi",
  yup: "yup",
  Type: "typebox",
};

export interface ValidatorContext {
  /** Local name → package it was imported from. */
  packages: ReadonlyMap<string, string>;
  constants: ReadonlyMap<string, string>;
  /** Module-level `const NAME = <expression>` of the file, for schemas referenced by name. */
  declarations: ReadonlyMap<string, ts.Expression>;
}

interface Chain {
  root: string;
  steps: Step[];
}

/** `z.string().min(1)` → root `z`, steps `string()`, `min(1)`; `body("x").isEmail()` → `body`, `("x")`, `isEmail()`. */
export function chainOf(expression: ts.Expression): Chain | undefined {
  const steps: Step[] = [];
  let node = unwrap(expression);
  for (let guard = 0; guard < 40; guard += 1) {
    if (ts.isCallExpression(node)) {
      const callee = unwrap(node.expression);
      if (ts.isPropertyAccessExpression(callee)) {
        steps.unshift({ name: callee.name.text, args: node.arguments });
        node = unwrap(callee.expression);
        continue;
      }
      if (ts.isIdentifier(callee)) {
        steps.unshift({ name: "", args: node.arguments });
        return { root: callee.text, steps };
      }
      return undefined;
    }
    if (ts.isPropertyAccessExpression(node)) {
      steps.unshift({ name: node.name.text });
      node = unwrap(node.expression);
      continue;
    }
    if (ts.isIdentifier(node)) return { root: node.text, steps };
    return undefined;
  }
  return undefined;
}

export function dialectOf(root: string, context: ValidatorContext): ValidatorDialect | undefined {
  const fromPackage = context.packages.get(root);
  if (fromPackage) return DIALECT_OF_PACKAGE[fromPackage];
  return DIALECT_OF_NAME[root];
}

/**
 * The JSON Schema a validator expression denotes, or undefined when the expression is not a validator this
 * reader knows. Names of other module-level schemas are followed (a depth cap stops cycles).
 */
export function validatorSchema(
  expression: ts.Expression,
  context: ValidatorContext,
  depth = 0,
): JsonSchema | undefined {
  return readField(expression, context, depth)?.schema;
}

function readField(
  expression: ts.Expression,
  context: ValidatorContext,
  depth: number,
): FieldSchema | undefined {
  if (depth > 8) return undefined;
  const value = unwrap(expression);
  if (ts.isIdentifier(value)) {
    const declared = context.declarations.get(value.text);
    return declared ? readField(declared, context, depth + 1) : undefined;
  }
  if (ts.isObjectLiteralExpression(value)) {
    const literal = jsonLiteral(value, context, depth);
    return isJsonSchemaLiteral(literal) ? { schema: literal as JsonSchema, required: false } : undefined;
  }
  const chain = chainOf(value);
  if (!chain) return undefined;
  const dialect = dialectOf(chain.root, context);
  if (dialect === "zod") return zodField(chain.steps, context, depth);
  if (dialect === "joi" || dialect === "yup") return fluentField(chain.steps, dialect, context, depth);
  if (dialect === "typebox") return typeboxField(chain.steps, context, depth);
  const declared = context.declarations.get(chain.root);
  // `UserSchema.partial()`, `Base.extend({...})`: a chain on a named schema.
  if (declared && chain.steps.length > 0 && chain.steps[0]?.name !== "") {
    const base = readField(declared, context, depth + 1);
    if (base) return applyModifiers(base, chain.steps, fieldReader("zod", context, depth));
  }
  return undefined;
}

const PRIMITIVES: Record<string, JsonSchema> = {
  string: { type: "string" },
  number: { type: "number" },
  bigint: { type: "integer" },
  integer: { type: "integer" },
  boolean: { type: "boolean" },
  bool: { type: "boolean" },
  date: { type: "string", format: "date-time" },
  any: {},
  unknown: {},
  binary: { type: "string", format: "binary" },
};

function zodField(steps: Step[], context: ValidatorContext, depth: number): FieldSchema | undefined {
  const index = steps.findIndex((step) => step.args !== undefined);
  const base = steps[index];
  if (!base) return undefined;
  const args = base.args ?? [];
  let field: FieldSchema | undefined;
  if (base.name in PRIMITIVES) field = { schema: { ...PRIMITIVES[base.name] }, required: true };
  else if (base.name === "object" || base.name === "strictObject" || base.name === "looseObject")
    field = { schema: objectOf(args[0], "zod", context, depth), required: true };
  else if (base.name === "array" || base.name === "set") {
    const items = args[0] ? readField(args[0], context, depth + 1)?.schema : undefined;
    field = { schema: { type: "array", ...(items ? { items } : {}) }, required: true };
  } else if (base.name === "enum") field = { schema: enumOf(args[0], context), required: true };
  else if (base.name === "literal") field = { schema: literalSchema(args[0], context), required: true };
  else if (base.name === "optional" || base.name === "nullable") {
    const inner = args[0] ? readField(args[0], context, depth + 1) : undefined;
    field = { schema: inner?.schema ?? {}, required: base.name !== "optional" && (inner?.required ?? true) };
  } else if (base.name === "email" || base.name === "uuid" || base.name === "url")
    field = { schema: { type: "string", format: FORMATS[base.name] }, required: true };
  else if (base.name === "record") field = { schema: { type: "object" }, required: true };
  else if (base.name === "union" || base.name === "nativeEnum" || base.name === "discriminatedUnion")
    field = { schema: {}, required: true };
  if (!field) return undefined;
  return applyModifiers(field, steps.slice(index + 1), fieldReader("zod", context, depth));
}

/** joi and yup read alike: a type call, then modifiers; a field is optional unless `.required()`. */
function fluentField(
  steps: Step[],
  dialect: "joi" | "yup",
  context: ValidatorContext,
  depth: number,
): FieldSchema | undefined {
  const index = steps.findIndex((step) => step.args !== undefined);
  const base = steps[index];
  if (!base) return undefined;
  let schema: JsonSchema;
  if (base.name in PRIMITIVES) schema = { ...PRIMITIVES[base.name] };
  else if (base.name === "object") schema = objectOf(base.args?.[0], dialect, context, depth);
  else if (base.name === "array") schema = { type: "array" };
  else if (base.name === "mixed" || base.name === "alternatives") schema = {};
  else return undefined;
  return applyModifiers(
    { schema, required: false },
    steps.slice(index + 1),
    fieldReader(dialect, context, depth),
  );
}

function typeboxField(steps: Step[], context: ValidatorContext, depth: number): FieldSchema | undefined {
  const base = steps[0];
  if (!base?.args) return undefined;
  const args = base.args;
  const options = (argument: ts.Expression | undefined): JsonSchema => {
    const literal = argument ? jsonLiteral(unwrap(argument), context, depth) : undefined;
    return literal && typeof literal === "object" && !Array.isArray(literal) ? (literal as JsonSchema) : {};
  };
  const name = base.name.toLowerCase();
  if (base.name === "Optional") {
    const inner = args[0] ? readField(args[0], context, depth + 1) : undefined;
    return { schema: inner?.schema ?? {}, required: false };
  }
  if (base.name === "Object")
    return {
      schema: { ...objectOf(args[0], "typebox", context, depth), ...options(args[1]) },
      required: true,
    };
  if (base.name === "Array") {
    const items = args[0] ? readField(args[0], context, depth + 1)?.schema : undefined;
    return { schema: { type: "array", ...(items ? { items } : {}), ...options(args[1]) }, required: true };
  }
  if (base.name === "Literal") return { schema: literalSchema(args[0], context), required: true };
  if (base.name === "Union") {
    const members =
      args[0] && ts.isArrayLiteralExpression(unwrap(args[0]))
        ? (unwrap(args[0]) as ts.ArrayLiteralExpression).elements
        : [];
    const values = members.map((member) => readField(member, context, depth + 1)?.schema?.const);
    if (values.length > 0 && values.every((entry) => entry !== undefined))
      return { schema: { enum: values }, required: true };
    return { schema: {}, required: true };
  }
  if (name in PRIMITIVES) return { schema: { ...PRIMITIVES[name], ...options(args[0]) }, required: true };
  return undefined;
}

/** How modifiers read what they are handed (`.extend({...})`, `.items(schema)`) in this dialect. */
function fieldReader(dialect: ValidatorDialect, context: ValidatorContext, depth: number): FieldReader {
  return {
    constants: context.constants,
    field: (expression) => readField(expression, context, depth + 1),
    object: (argument) => objectOf(argument, dialect, context, depth),
  };
}

/** `{ name: z.string(), age: z.number().optional() }` as an object schema with its required names. */
function objectOf(
  argument: ts.Expression | undefined,
  dialect: ValidatorDialect,
  context: ValidatorContext,
  depth: number,
): JsonSchema {
  const value = argument && unwrap(argument);
  if (!value || !ts.isObjectLiteralExpression(value)) return { type: "object" };
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const property of value.properties) {
    if (ts.isSpreadAssignment(property)) {
      const spread = readField(property.expression, context, depth + 1)?.schema;
      const spreadProperties = (spread?.properties ?? {}) as Record<string, JsonSchema>;
      Object.assign(properties, spreadProperties);
      required.push(...((spread?.required as string[] | undefined) ?? []));
      continue;
    }
    const name =
      ts.isPropertyAssignment(property) || ts.isShorthandPropertyAssignment(property)
        ? propertyName(property.name)
        : undefined;
    if (name === undefined) continue;
    const initializer = ts.isPropertyAssignment(property)
      ? property.initializer
      : (property as ts.ShorthandPropertyAssignment).name;
    const field = readField(initializer, context, depth + 1);
    properties[name] = field?.schema ?? {};
    if (field?.required && dialect !== "express-validator") required.push(name);
  }
  return objectSchema(properties, required);
}

function enumOf(argument: ts.Expression | undefined, context: ValidatorContext): JsonSchema {
  let value = argument && unwrap(argument);
  if (value && ts.isIdentifier(value)) {
    const declared = context.declarations.get(value.text);
    value = declared && unwrap(declared);
  }
  if (!value || !ts.isArrayLiteralExpression(value)) return { type: "string" };
  const values = value.elements
    .map((element) => literalValue(element, context.constants))
    .filter((entry) => entry !== undefined);
  return { type: "string", enum: values };
}

function literalSchema(argument: ts.Expression | undefined, context: ValidatorContext): JsonSchema {
  const value = argument ? literalValue(argument, context.constants) : undefined;
  return value === undefined ? {} : { const: value };
}

/**
 * A literal as JSON: objects, arrays and scalars, module constants by name, and validator calls inside
 * (`body: Type.Object(...)` in a Fastify schema). Anything else becomes undefined and is left out.
 */
export function jsonLiteral(node: ts.Expression, context: ValidatorContext, depth = 0): unknown {
  if (depth > 12) return undefined;
  const value = unwrap(node);
  if (ts.isObjectLiteralExpression(value)) {
    const result: Record<string, unknown> = {};
    for (const property of value.properties) {
      if (ts.isSpreadAssignment(property)) {
        const spread = jsonLiteral(property.expression, context, depth + 1);
        if (spread && typeof spread === "object" && !Array.isArray(spread)) Object.assign(result, spread);
        continue;
      }
      if (!ts.isPropertyAssignment(property) && !ts.isShorthandPropertyAssignment(property)) continue;
      const name = propertyName(property.name);
      if (name === undefined) continue;
      const initializer = ts.isPropertyAssignment(property) ? property.initializer : property.name;
      const entry = jsonLiteral(initializer, context, depth + 1);
      if (entry !== undefined) result[name] = entry;
    }
    return result;
  }
  if (ts.isArrayLiteralExpression(value))
    return value.elements
      .map((element) => jsonLiteral(element, context, depth + 1))
      .filter((entry) => entry !== undefined);
  const scalar = literalValue(value, context.constants);
  if (scalar !== undefined) return scalar;
  if (ts.isIdentifier(value)) {
    const declared = context.declarations.get(value.text);
    return declared ? jsonLiteral(declared, context, depth + 1) : undefined;
  }
  if (ts.isCallExpression(value) || ts.isPropertyAccessExpression(value))
    return validatorSchema(value, context, depth + 1);
  return undefined;
}

/** An object that reads as a JSON Schema (it has `type` or `properties`), not any options object. */
export function isJsonSchemaLiteral(value: unknown): boolean {
  if (!value || typeof value !== "object" || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record.type === "string" || (typeof record.properties === "object" && record.properties !== null)
  );
}
