import ts from "typescript";
import type { CallIndex } from "./call-index.ts";
import { type Env, type Evaluator, literalOf, propertyName, skipOuter, type Value } from "./evaluate.ts";

// What a request body sent from frontend code looks like: its encoding (from how it is built) and, when
// its fields are visible (an object literal, `formData.append("name", …)`, a `a=1&b=2` string), a JSON
// Schema of them. Values are typed from literals; anything computed is left untyped.

export type BodyEncoding = "json" | "form" | "multipart" | "text";

export interface BodyShape {
  contentType: string;
  schema?: Record<string, unknown>;
  /** The page form whose fields are sent (`$("#buy").serialize()`, `new FormData(getElementById("buy"))`), by id. */
  formId?: string;
}

const CONTENT_TYPES: Record<BodyEncoding, string> = {
  json: "application/json",
  form: "application/x-www-form-urlencoded",
  multipart: "multipart/form-data",
  text: "text/plain",
};

export class BodyReader {
  constructor(
    private readonly evaluator: Evaluator,
    private readonly calls: CallIndex,
  ) {}

  /** `plain` is how the library sends a plain object (axios: JSON, jQuery: a form). */
  read(
    expression: ts.Expression,
    env: Env,
    plain: BodyEncoding,
    contentType?: string,
  ): BodyShape | undefined {
    const value = this.evaluator.evaluate(expression, env);
    const shape = this.shapeOf(expression, value, env, plain);
    if (!shape) return undefined;
    if (contentType) shape.contentType = contentType.split(";")[0]!.trim().toLowerCase();
    return shape;
  }

  /** A JSON Schema of what a value holds: objects by property, literals by type, the rest untyped. */
  schemaOf(value: Value, env: Env, depth = 0): Record<string, unknown> {
    switch (value.kind) {
      case "text":
        return { type: "string" };
      case "number":
        return { type: "number" };
      case "boolean":
        return { type: "boolean" };
      case "array": {
        const first = value.node.elements[0];
        if (!first || depth > 3 || ts.isSpreadElement(first)) return { type: "array" };
        return { type: "array", items: this.schemaOf(this.evaluator.evaluate(first, env), env, depth + 1) };
      }
      case "object":
        return depth > 3 ? { type: "object" } : this.objectSchema(value.node, env, depth);
      default:
        return {};
    }
  }

  private shapeOf(
    expression: ts.Expression,
    value: Value,
    env: Env,
    plain: BodyEncoding,
  ): BodyShape | undefined {
    if (value.kind === "call" && value.name === "stringify") {
      const argument = value.node.arguments[0];
      const data = argument ? this.evaluator.evaluate(argument, env) : undefined;
      if (data?.kind === "unknown" && data.name === "undefined") return undefined;
      return {
        contentType: CONTENT_TYPES.json,
        ...(data ? { schema: this.schemaOf(data, env) } : {}),
      };
    }
    if (value.kind === "call" && (value.name === "serialize" || value.name === "serializeArray")) {
      const formId = this.formIdOf(value.node.expression, env);
      return { contentType: CONTENT_TYPES.form, ...(formId ? { formId } : {}) };
    }
    if (
      value.kind === "new" &&
      (value.constructor === "FormData" || value.constructor === "URLSearchParams")
    ) {
      const encoding: BodyEncoding = value.constructor === "FormData" ? "multipart" : "form";
      const properties: Record<string, unknown> = {};
      const initial = value.node.arguments?.[0];
      const formId = initial && encoding === "multipart" ? this.formIdOf(initial, env) : undefined;
      if (initial && encoding === "form") {
        const seed = this.evaluator.evaluate(initial, env);
        if (seed.kind === "object")
          Object.assign(properties, this.objectSchema(seed.node, env, 0).properties);
      }
      for (const name of this.appendedFields(expression)) properties[name] ??= { type: "string" };
      return {
        contentType: CONTENT_TYPES[encoding],
        ...(formId ? { formId } : {}),
        ...(Object.keys(properties).length > 0 ? { schema: { type: "object", properties } } : {}),
      };
    }
    if (value.kind === "object")
      return { contentType: CONTENT_TYPES[plain], schema: this.objectSchema(value.node, env, 0) };
    if (value.kind === "text") {
      const literal = value.parts.map((part) => ("literal" in part ? part.literal : "x")).join("");
      if (/^\s*[[{]/.test(literal)) return { contentType: CONTENT_TYPES.json };
      const fields = [...literal.matchAll(/(?:^|&)([A-Za-z_][\w.[\]-]*)=/g)].map((match) => match[1]!);
      if (fields.length > 0) {
        const properties = Object.fromEntries(fields.map((field) => [field, { type: "string" }]));
        return { contentType: CONTENT_TYPES.form, schema: { type: "object", properties } };
      }
      return { contentType: CONTENT_TYPES.text };
    }
    if (value.kind === "unknown" && value.name === "undefined") return undefined;
    return { contentType: CONTENT_TYPES[plain] };
  }

  private objectSchema(node: ts.ObjectLiteralExpression, env: Env, depth: number): Record<string, unknown> {
    const properties: Record<string, unknown> = {};
    for (const property of node.properties) {
      if (ts.isSpreadAssignment(property)) {
        const spread = this.evaluator.evaluate(property.expression, env);
        if (spread.kind === "object")
          Object.assign(
            properties,
            (this.objectSchema(spread.node, env, depth + 1).properties as object) ?? {},
          );
        continue;
      }
      if (ts.isMethodDeclaration(property) || ts.isAccessor(property)) continue;
      const name = propertyName(property);
      if (name === undefined) continue;
      const initializer = ts.isPropertyAssignment(property)
        ? property.initializer
        : ts.isShorthandPropertyAssignment(property)
          ? property.name
          : undefined;
      if (!initializer) continue;
      const inner = skipOuter(initializer);
      // A function or a callback is not data a server receives.
      if (ts.isArrowFunction(inner) || ts.isFunctionExpression(inner)) continue;
      properties[name] = this.schemaOf(this.evaluator.evaluate(initializer, env), env, depth + 1);
    }
    return { type: "object", properties };
  }

  /**
   * The id of the form an expression designates: `$("#buy")` / `jQuery("form#buy")` (a serialize call's
   * receiver), `document.getElementById("buy")`, `document.querySelector("#buy")`, `document.forms.buy`.
   */
  private formIdOf(expression: ts.Expression, env: Env): string | undefined {
    let target = skipOuter(expression);
    if (
      ts.isPropertyAccessExpression(target) &&
      (target.name.text === "serialize" || target.name.text === "serializeArray")
    )
      target = skipOuter(target.expression);
    if (
      ts.isPropertyAccessExpression(target) &&
      ts.isPropertyAccessExpression(target.expression) &&
      target.expression.name.text === "forms"
    )
      return target.name.text;
    if (!ts.isCallExpression(target)) {
      const value = this.evaluator.evaluate(target, env);
      if (value.kind !== "call") return undefined;
      target = value.node;
    }
    const call = target as ts.CallExpression;
    const first = call.arguments[0];
    const argument = first ? literalOf(this.evaluator.evaluate(first, env)) : undefined;
    if (!argument) return undefined;
    const callee = skipOuter(call.expression);
    const name = ts.isIdentifier(callee)
      ? callee.text
      : ts.isPropertyAccessExpression(callee)
        ? callee.name.text
        : "";
    if (name === "getElementById") return argument;
    if (name === "$" || name === "jQuery" || name === "querySelector")
      return argument.match(/^(?:form)?#([\w-]+)$/)?.[1];
    return undefined;
  }

  /** Field names added with `.append("name", …)` / `.set("name", …)` to the FormData a variable holds. */
  private appendedFields(expression: ts.Expression): string[] {
    const target = skipOuter(expression);
    if (!ts.isIdentifier(target)) return [];
    const declarations = new Set(this.evaluator.declarationsOf(target));
    if (declarations.size === 0) return [];
    const names: string[] = [];
    for (const call of [...this.calls.named("append"), ...this.calls.named("set")]) {
      const callee = call.expression;
      if (!ts.isPropertyAccessExpression(callee) || !ts.isIdentifier(callee.expression)) continue;
      if (callee.expression.text !== target.text) continue;
      if (
        !this.evaluator.declarationsOf(callee.expression).some((declaration) => declarations.has(declaration))
      )
        continue;
      const first = call.arguments[0];
      const name = first ? literalOf(this.evaluator.evaluate(first, new Map())) : undefined;
      if (name && !names.includes(name)) names.push(name);
    }
    return names;
  }
}
