import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { APP_ROOT } from "./helpers.ts";

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document
type Schema = any;

export const openapi: Schema = parse(readFileSync(path.join(APP_ROOT, "openapi.yaml"), "utf8"));

function resolve(schema: Schema): Schema {
  let current = schema;
  while (current?.$ref) {
    const parts = String(current.$ref).replace(/^#\//, "").split("/");
    current = parts.reduce((node: Schema, part: string) => node?.[part], openapi);
  }
  return current;
}

/** A small validator for the subset of OpenAPI 3.0 schema keywords this document uses. */
export function validate(schemaOrRef: Schema, value: unknown, at = "$"): string[] {
  const schema = resolve(schemaOrRef);
  if (!schema) return [];
  if (value === null)
    return schema.nullable || schema.type === undefined ? [] : [`${at}: null is not allowed`];
  const errors: string[] = [];
  if (schema.allOf) for (const part of schema.allOf) errors.push(...validate(part, value, at));
  const type = schema.type;
  if (type === "object" || schema.properties) {
    if (typeof value !== "object" || Array.isArray(value)) return [...errors, `${at}: expected object`];
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in record)) errors.push(`${at}.${key}: required`);
    for (const [key, sub] of Object.entries(schema.properties ?? {})) {
      if (key in record) errors.push(...validate(sub, record[key], `${at}.${key}`));
    }
  } else if (type === "array") {
    if (!Array.isArray(value)) return [...errors, `${at}: expected array`];
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      errors.push(`${at}: ${value.length} items, at most ${schema.maxItems}`);
    }
    value.forEach((item, index) => {
      errors.push(...validate(schema.items, item, `${at}[${index}]`));
    });
  } else if (type === "integer") {
    if (!Number.isInteger(value)) errors.push(`${at}: expected integer, got ${JSON.stringify(value)}`);
  } else if (type === "number") {
    if (typeof value !== "number") errors.push(`${at}: expected number, got ${JSON.stringify(value)}`);
  } else if (type === "string") {
    if (typeof value !== "string") errors.push(`${at}: expected string, got ${JSON.stringify(value)}`);
  } else if (type === "boolean") {
    if (typeof value !== "boolean") errors.push(`${at}: expected boolean, got ${JSON.stringify(value)}`);
  }
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${at}: ${JSON.stringify(value)} not in enum`);
  if (typeof value === "number" && schema.minimum !== undefined && value < schema.minimum) {
    errors.push(`${at}: ${value} is below the minimum ${schema.minimum}`);
  }
  return errors;
}

export function operation(method: string, templatePath: string): Schema {
  return openapi.paths?.[templatePath]?.[method.toLowerCase()];
}

export function responseSchema(method: string, templatePath: string, status: number): Schema {
  const response = resolve(operation(method, templatePath)?.responses?.[String(status)]);
  return response?.content?.["application/json"]?.schema;
}

export function documentedStatuses(method: string, templatePath: string): string[] {
  return Object.keys(operation(method, templatePath)?.responses ?? {});
}
