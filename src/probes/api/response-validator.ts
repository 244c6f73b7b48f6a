import AjvModule, { type ErrorObject, type ValidateFunction } from "ajv";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import {
  acyclicSchema,
  asSchema,
  chooseBranch,
  forDirection,
  propertiesOf,
  schemaType,
} from "../schema-values/json-schema.ts";

// ajv ships CommonJS; under NodeNext the default import is the module object on some paths.
const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const Ajv = AjvModule.default ?? AjvModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;

export type IssueKind = "missing" | "extra" | "type" | "format" | "enum" | "constraint";

export interface ContractIssue {
  /** JSON pointer-ish path into the body, `(root)` for the body itself. */
  path: string;
  kind: IssueKind;
  message: string;
}

/**
 * Validates response bodies against the document's schemas: `ajv/dist/2020.js` for OpenAPI 3.1, plain Ajv
 * (draft-07, which also knows `nullable`) for 3.0; `strict: false` because OpenAPI adds keywords.
 */
export class ResponseValidator {
  private readonly ajv: InstanceType<typeof Ajv>;
  private readonly compiled = new WeakMap<object, ValidateFunction | undefined>();

  constructor(openapiVersion: string | undefined) {
    const options = {
      strict: false,
      allErrors: true,
      verbose: true,
      validateSchema: false,
      logger: false as const,
    };
    this.ajv = openapiVersion?.startsWith("3.1") ? new Ajv2020(options) : new Ajv(options);
    addFormats(this.ajv);
  }

  validate(schema: JsonSchema, body: unknown): ContractIssue[] {
    const validate = this.compile(schema);
    const issues: ContractIssue[] = [];
    if (validate && !validate(body)) {
      for (const error of validate.errors ?? []) {
        const issue = toIssue(error);
        if (issue && !issues.some((known) => known.path === issue.path && known.kind === issue.kind))
          issues.push(issue);
      }
    }
    for (const extra of extraFields(forDirection(acyclicSchema(schema), "response"), body, "")) {
      if (!issues.some((known) => known.path === extra.path)) issues.push(extra);
    }
    return collapseBranches(issues);
  }

  private compile(schema: JsonSchema): ValidateFunction | undefined {
    if (this.compiled.has(schema)) return this.compiled.get(schema);
    let validate: ValidateFunction | undefined;
    try {
      validate = this.ajv.compile(nullableAsType(forDirection(acyclicSchema(schema), "response")));
    } catch {
      validate = undefined;
    }
    this.compiled.set(schema, validate);
    return validate;
  }
}

/**
 * OpenAPI 3.0's `nullable: true` beside `allOf`/`$ref` but without `type` is legal in the document yet
 * refused by ajv ("nullable" cannot be used without "type"), which would leave the whole body unchecked:
 * it becomes `anyOf: [the schema, null]`.
 */
export function nullableAsType(schema: unknown): JsonSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== "object") return node;
    const copy: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) copy[key] = walk(value);
    if (copy.nullable === true && copy.type === undefined) {
      delete copy.nullable;
      return { anyOf: [copy, { type: "null" }] };
    }
    return copy;
  };
  return asSchema(walk(schema));
}

function toIssue(error: ErrorObject): ContractIssue | undefined {
  const path = error.instancePath ? error.instancePath.slice(1).replace(/\//g, ".") : "(root)";
  switch (error.keyword) {
    case "required": {
      const missing = (error.params as { missingProperty?: string }).missingProperty ?? "?";
      return {
        path: path === "(root)" ? missing : `${path}.${missing}`,
        kind: "missing",
        message: `required field "${missing}" is missing`,
      };
    }
    case "type":
      return {
        path,
        kind: "type",
        message: `expected ${(error.params as { type?: string }).type}, got ${describe(error.data)}`,
      };
    case "format":
      return {
        path,
        kind: "format",
        message: `not a valid ${(error.params as { format?: string }).format}: ${JSON.stringify(error.data)?.slice(0, 60)}`,
      };
    case "enum":
      return {
        path,
        kind: "enum",
        message: `${JSON.stringify(error.data)?.slice(0, 60)} is not one of the documented values`,
      };
    case "additionalProperties": {
      const extra = (error.params as { additionalProperty?: string }).additionalProperty ?? "?";
      return {
        path: path === "(root)" ? extra : `${path}.${extra}`,
        kind: "extra",
        message: `field "${extra}" is not in the document`,
      };
    }
    case "oneOf":
    case "anyOf":
    case "if":
      return undefined;
    default:
      return {
        path,
        kind: "constraint",
        message: `${error.keyword}: ${error.message ?? "violates the schema"}`,
      };
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "number" && Number.isInteger(value) ? "integer" : typeof value;
}

/**
 * Fields the document does not list, where it lists properties and does not allow extras explicitly:
 * an undocumented field is drift even when the schema leaves additionalProperties open by omission.
 */
function extraFields(schema: JsonSchema, value: unknown, path: string): ContractIssue[] {
  const chosen = chooseBranch(schema);
  const issues: ContractIssue[] = [];
  if (Array.isArray(value) && schemaType(chosen) === "array") {
    const items = asSchema(chosen.items);
    const first = value.find((item) => item && typeof item === "object");
    if (first !== undefined) issues.push(...extraFields(items, first, `${path}${path ? "." : ""}0`));
    return issues;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return issues;
  const properties = propertiesOf(chosen);
  if (Object.keys(properties).length === 0 || chosen.additionalProperties !== undefined) return issues;
  if (chosen.oneOf || chosen.anyOf || schema.oneOf || schema.anyOf) return issues;
  for (const [key, inner] of Object.entries(value)) {
    const innerPath = path ? `${path}.${key}` : key;
    if (!(key in properties))
      issues.push({ path: innerPath, kind: "extra", message: `field "${key}" is not in the document` });
    else issues.push(...extraFields(properties[key]!, inner, innerPath));
  }
  return issues;
}

/** An array's items repeat the same issue: report `items.0.x` once, not once per item. */
function collapseBranches(issues: ContractIssue[]): ContractIssue[] {
  const seen = new Set<string>();
  const result: ContractIssue[] = [];
  for (const issue of issues) {
    const key = `${issue.kind}:${issue.path.replace(/\.\d+(?=\.|$)/g, ".*")}`;
    if (seen.has(key)) continue;
    seen.add(key);
    result.push({
      ...issue,
      path: issue.path.replace(/^(\d+)(?=\.|$)/, "*").replace(/\.\d+(?=\.|$)/g, ".*"),
    });
  }
  return result;
}
