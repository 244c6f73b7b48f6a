import ts from "typescript";
import { expressValidatorField } from "./javascript-express-validator.ts";
import {
  exportedCallable,
  exportedLocal,
  type JavaScriptFileModel,
  localCallable,
  memberCallable,
} from "./javascript-file-model.ts";
import {
  applySchema,
  type Deferred,
  linkSchema,
  type ReadSink,
  RequestReader,
  type SchemaLocation,
} from "./javascript-request-reads.ts";
import { isFunctionNode, propertyName, staticString, unwrap } from "./javascript-syntax.ts";
import { chainOf, isJsonSchemaLiteral, jsonLiteral } from "./javascript-validators.ts";
import { guessedSchema, type JsonSchema, type RouteInputs, RouteInputsBuilder } from "./route-inputs.ts";

// The arguments of a route registration after its path — middleware, validators, upload handlers, the
// handler itself, Fastify's options object — read for what the route accepts. Names defined in another
// file are deferred and looked up once every file is read (javascript-input-resolution.ts).

export interface InputsDraft {
  inputs: RouteInputs;
  deferred: Deferred[];
}

const MAX_ARGUMENT_DEPTH = 4;

/** Fastify's `schema` keys and what they describe. */
const FASTIFY_SCHEMA_KEYS: Record<string, SchemaLocation> = {
  body: "body",
  querystring: "query",
  query: "query",
  params: "path",
  headers: "header",
  cookies: "cookie",
};

/** Validation middleware options (`celebrate({ body })`, `validate({ query })`, `[Segments.BODY]`). */
const SEGMENT_KEYS: Record<string, SchemaLocation> = {
  body: "body",
  json: "body",
  form: "body",
  query: "query",
  querystring: "query",
  params: "path",
  param: "path",
  headers: "header",
  header: "header",
  cookies: "cookie",
  cookie: "cookie",
};

export function routeArgumentInputs(
  model: JavaScriptFileModel,
  handlers: readonly ts.Expression[],
): InputsDraft {
  const sink: ReadSink = { builder: new RouteInputsBuilder(), deferred: [] };
  const reader = new RouteArgumentReader(model, sink);
  for (const handler of handlers) reader.collect(handler);
  return { inputs: sink.builder.build(), deferred: sink.deferred };
}

/** What one handler function reads (a Next.js route's export). */
export function functionInputs(model: JavaScriptFileModel, handler: ts.FunctionLikeDeclaration): InputsDraft {
  const sink: ReadSink = { builder: new RouteInputsBuilder(), deferred: [] };
  new RequestReader(model, sink).readHandler(handler);
  return { inputs: sink.builder.build(), deferred: sink.deferred };
}

/** What a hand-written dispatcher's branch reads: aliases from the whole handler, reads from the branch. */
export function branchInputs(
  model: JavaScriptFileModel,
  handler: ts.FunctionLikeDeclaration,
  branch: ts.Node,
): InputsDraft {
  const sink: ReadSink = { builder: new RouteInputsBuilder(), deferred: [] };
  new RequestReader(model, sink).readBranch(handler, branch);
  return { inputs: sink.builder.build(), deferred: sink.deferred };
}

export class RouteArgumentReader {
  private readonly reader: RequestReader;

  constructor(
    private readonly model: JavaScriptFileModel,
    private readonly sink: ReadSink,
  ) {
    this.reader = new RequestReader(model, sink);
  }

  collect(expression: ts.Expression, depth = 0): void {
    if (depth > MAX_ARGUMENT_DEPTH) return;
    const value = unwrap(expression);
    if (ts.isArrayLiteralExpression(value)) {
      for (const element of value.elements) this.collect(element, depth + 1);
    } else if (isFunctionNode(value)) {
      this.reader.readHandler(value);
    } else if (ts.isObjectLiteralExpression(value)) {
      this.collectOptions(value, depth);
    } else if (ts.isIdentifier(value)) {
      this.collectName(value.text, depth);
    } else if (ts.isPropertyAccessExpression(value)) {
      this.collectMember(value, depth);
    } else if (ts.isCallExpression(value)) {
      this.collectCall(value, depth);
    }
  }

  /** What an export of this file is, read as route arguments (a handler, an array of validators). */
  collectExport(exportName: string, member: string | undefined): void {
    const callable = exportedCallable(this.model, exportName, member);
    if (callable) {
      this.reader.readHandler(callable);
      return;
    }
    const local = member ?? exportedLocal(this.model, exportName);
    const declared = this.model.declarations.get(local);
    if (declared) this.collect(declared, 1);
  }

  private collectName(name: string, depth: number): void {
    const imported = this.model.bindings.imports.get(name);
    if (imported) {
      this.sink.deferred.push({ kind: "handler", file: this.model.file, reference: imported });
      return;
    }
    const callable = localCallable(this.model, name);
    if (callable) {
      this.reader.readHandler(callable);
      return;
    }
    const declared = this.model.declarations.get(name);
    if (declared) this.collect(declared, depth + 1);
  }

  private collectMember(access: ts.PropertyAccessExpression, depth: number): void {
    const object = unwrap(access.expression);
    if (!ts.isIdentifier(object)) return;
    const imported = this.model.bindings.imports.get(object.text);
    if (imported) {
      this.sink.deferred.push({
        kind: "handler",
        file: this.model.file,
        reference: imported,
        member: access.name.text,
      });
      return;
    }
    const callable = memberCallable(this.model, object.text, access.name.text);
    if (callable) this.reader.readHandler(callable);
    else if (depth < MAX_ARGUMENT_DEPTH) this.collectDeclaredMember(object.text, access.name.text, depth);
  }

  /** `validators.createUser` where `validators` is a local object of middleware arrays. */
  private collectDeclaredMember(object: string, member: string, depth: number): void {
    const declared = this.model.declarations.get(object);
    const value = declared && unwrap(declared);
    if (!value || !ts.isObjectLiteralExpression(value)) return;
    for (const property of value.properties) {
      if (ts.isPropertyAssignment(property) && propertyName(property.name) === member)
        this.collect(property.initializer, depth + 1);
    }
  }

  private collectCall(call: ts.CallExpression, depth: number): void {
    const callee = unwrap(call.expression);
    // `controller.list.bind(controller)`
    if (ts.isPropertyAccessExpression(callee) && callee.name.text === "bind") {
      this.collect(callee.expression, depth + 1);
      return;
    }
    const field = expressValidatorField(call, this.model.validators);
    if (field) {
      for (const name of field.names) this.applyField(field.location, name, field.schema, field.required);
      return;
    }
    if (this.collectUpload(call)) return;
    const chain = chainOf(call);
    if (chain?.root === "checkSchema" && call.arguments[0]) {
      this.collectCheckSchema(call.arguments[0]);
      return;
    }
    // A wrapper or a validation middleware: `asyncHandler(fn)`, `validate(schema)`, `zValidator("json", s)`.
    const calleeName = ts.isIdentifier(callee)
      ? callee.text
      : ts.isPropertyAccessExpression(callee)
        ? callee.name.text
        : "";
    const named = call.arguments.map((argument) => staticString(argument, this.model.bindings.constants));
    const location =
      named.map((text) => (text ? SEGMENT_KEYS[text] : undefined)).find((entry) => entry !== undefined) ??
      locationByName(calleeName);
    if (named.includes("form")) this.sink.builder.encoding("form");
    if (named.includes("json")) this.sink.builder.encoding("json");
    for (const argument of call.arguments) {
      const value = unwrap(argument);
      if (ts.isObjectLiteralExpression(value) && this.collectSegments(value)) continue;
      if (ts.isIdentifier(value) && this.model.bindings.imports.has(value.text)) {
        const reference = this.model.bindings.imports.get(value.text)!;
        this.sink.deferred.push({ kind: "schema", file: this.model.file, reference, location });
        this.sink.deferred.push({ kind: "handler", file: this.model.file, reference });
        continue;
      }
      if (linkSchema(this.model, value, location, this.sink)) continue;
      if (isFunctionNode(value) || ts.isIdentifier(value) || ts.isPropertyAccessExpression(value))
        this.collect(value, depth + 1);
    }
  }

  /** `{ body: schema, query: schema }` or `{ [Segments.BODY]: schema }`; true when it was one. */
  private collectSegments(object: ts.ObjectLiteralExpression): boolean {
    let found = false;
    for (const property of object.properties) {
      if (!ts.isPropertyAssignment(property)) continue;
      const key = ts.isComputedPropertyName(property.name)
        ? (property.name.expression.getText(this.model.source).split(".").pop() ?? "").toLowerCase()
        : propertyName(property.name);
      const location = key === undefined ? undefined : SEGMENT_KEYS[key];
      if (location && linkSchema(this.model, property.initializer, location, this.sink)) found = true;
    }
    return found;
  }

  /** Fastify options: `{ schema: { body, querystring }, preHandler, handler }`. */
  private collectOptions(object: ts.ObjectLiteralExpression, depth: number): void {
    for (const property of object.properties) {
      if (
        !ts.isPropertyAssignment(property) &&
        !ts.isShorthandPropertyAssignment(property) &&
        !ts.isMethodDeclaration(property)
      )
        continue;
      const key = propertyName(property.name);
      if (ts.isMethodDeclaration(property)) {
        if (key === "handler") this.reader.readHandler(property);
        continue;
      }
      const initializer = ts.isPropertyAssignment(property) ? property.initializer : property.name;
      if (key === "schema") this.collectFastifySchema(initializer);
      else if (key === "handler" || key === "preHandler" || key === "preValidation" || key === "onRequest")
        this.collect(initializer, depth + 1);
    }
  }

  private collectFastifySchema(expression: ts.Expression): void {
    let value = unwrap(expression);
    if (ts.isIdentifier(value)) {
      const declared = this.model.declarations.get(value.text);
      if (!declared) return;
      value = unwrap(declared);
    }
    if (!ts.isObjectLiteralExpression(value)) return;
    for (const property of value.properties) {
      if (!ts.isPropertyAssignment(property) && !ts.isShorthandPropertyAssignment(property)) continue;
      const key = propertyName(property.name);
      const location = key === undefined ? undefined : FASTIFY_SCHEMA_KEYS[key];
      if (!location) continue;
      const initializer = ts.isPropertyAssignment(property) ? property.initializer : property.name;
      const imported = ts.isIdentifier(unwrap(initializer))
        ? this.model.bindings.imports.get((unwrap(initializer) as ts.Identifier).text)
        : undefined;
      if (imported) {
        this.sink.deferred.push({ kind: "schema", file: this.model.file, reference: imported, location });
        continue;
      }
      const literal = jsonLiteral(initializer, this.model.validators);
      if (isJsonSchemaLiteral(literal)) applySchema(this.sink.builder, literal as JsonSchema, location);
    }
  }

  /** multer: `upload.single("avatar")`, `upload.array("photos")`, `upload.fields([{ name }])`. */
  private collectUpload(call: ts.CallExpression): boolean {
    const callee = unwrap(call.expression);
    if (!ts.isPropertyAccessExpression(callee) || !ts.isIdentifier(unwrap(callee.expression))) return false;
    const root = (unwrap(callee.expression) as ts.Identifier).text;
    const declared = this.model.declarations.get(root);
    const created = declared && unwrap(declared);
    const isMulter =
      this.model.bindings.packages.get(root) === "multer" ||
      (created !== undefined &&
        ts.isCallExpression(created) &&
        ts.isIdentifier(unwrap(created.expression)) &&
        this.model.bindings.packages.get((unwrap(created.expression) as ts.Identifier).text) === "multer");
    if (!isMulter) return false;
    const builder = this.sink.builder.encoding("multipart").readsBody();
    const file = guessedSchema({ type: "string", format: "binary" });
    const name = staticString(call.arguments[0], this.model.bindings.constants);
    if (callee.name.text === "single" && name) builder.bodyField([name], file);
    if (callee.name.text === "array" && name)
      builder.bodyField([name], guessedSchema({ type: "array", items: file }));
    if (callee.name.text === "fields") {
      const list = call.arguments[0] && unwrap(call.arguments[0]);
      for (const element of list && ts.isArrayLiteralExpression(list) ? list.elements : []) {
        const entry = unwrap(element);
        if (!ts.isObjectLiteralExpression(entry)) continue;
        const field = entry.properties.find(
          (property) => property.name && propertyName(property.name) === "name",
        );
        const fieldName =
          field && ts.isPropertyAssignment(field)
            ? staticString(field.initializer, this.model.bindings.constants)
            : undefined;
        if (fieldName) builder.bodyField([fieldName], file);
      }
    }
    return true;
  }

  /** express-validator's `checkSchema({ email: { in: ["body"], isEmail: true, optional: true } })`. */
  private collectCheckSchema(argument: ts.Expression): void {
    const literal = jsonLiteral(argument, this.model.validators);
    if (!literal || typeof literal !== "object" || Array.isArray(literal)) return;
    for (const [name, rules] of Object.entries(literal as Record<string, unknown>)) {
      if (!rules || typeof rules !== "object") continue;
      const rule = rules as Record<string, unknown>;
      const where = Array.isArray(rule.in)
        ? String(rule.in[0])
        : typeof rule.in === "string"
          ? rule.in
          : "body";
      const location = SEGMENT_KEYS[where] ?? "body";
      const schema: JsonSchema = {
        type: rule.isInt
          ? "integer"
          : rule.isFloat || rule.isNumeric
            ? "number"
            : rule.isBoolean
              ? "boolean"
              : "string",
      };
      if (rule.isEmail) schema.format = "email";
      if (rule.isUUID) schema.format = "uuid";
      const bounds = (value: unknown): Record<string, unknown> => {
        const options =
          value && typeof value === "object" ? ((value as Record<string, unknown>).options ?? value) : {};
        return options && typeof options === "object" ? (options as Record<string, unknown>) : {};
      };
      const length = bounds(rule.isLength);
      if (typeof length.min === "number") schema.minLength = length.min;
      if (typeof length.max === "number") schema.maxLength = length.max;
      const range = bounds(rule.isInt ?? rule.isFloat);
      if (typeof range.min === "number") schema.minimum = range.min;
      if (typeof range.max === "number") schema.maximum = range.max;
      this.applyField(location, name, schema, !rule.optional);
    }
  }

  private applyField(location: SchemaLocation, name: string, schema: JsonSchema, required: boolean): void {
    const path = name.split(".").map((segment) => (segment === "*" ? "[]" : segment));
    if (location === "body") this.sink.builder.bodyField(path, schema, required);
    else if (location !== "path")
      this.sink.builder.parameter(location, path[0] ?? name, path.length > 1 ? undefined : schema, required);
  }
}

function locationByName(name: string): SchemaLocation {
  if (/quer/i.test(name)) return "query";
  if (/param/i.test(name)) return "path";
  if (/header/i.test(name)) return "header";
  return "body";
}
