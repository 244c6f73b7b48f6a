import ts from "typescript";
import type { ImportReference, JavaScriptFileModel } from "./javascript-file-model.ts";
import { localCallable } from "./javascript-file-model.ts";
import {
  ARRAY_METHODS,
  bag,
  defaultSchema,
  elementKey,
  hintAt,
  isAccess,
  isAccessObject,
  member,
  nestedGuess,
  type Origin,
  REQUEST_READS,
  requestCall,
  STRING_METHODS,
  skipWrappers,
} from "./javascript-request-origins.ts";
import { isFunctionNode, propertyName, staticString, unwrap } from "./javascript-syntax.ts";
import { validatorSchema } from "./javascript-validators.ts";
import { guessedSchema, type JsonSchema, type RouteInputsBuilder } from "./route-inputs.ts";

// What a handler reads from the request, whatever the framework calls it: Express and Fastify `req.query.x`,
// Koa `ctx.request.body`, Hono `c.req.query("x")`, node:http `new URL(req.url, base).searchParams.get("x")`
// or `url.parse(req.url, true).query.x`. Reads are followed through aliases (`const q = req.query`,
// destructuring with defaults) and one or two calls into helpers of the same file.

export type SchemaLocation = "body" | "query" | "header" | "cookie" | "path";

/** Something named in this file but defined in another, looked up once every file is read. */
export type Deferred =
  | { kind: "handler"; file: string; reference: ImportReference; member?: string }
  | { kind: "schema"; file: string; reference: ImportReference; location: SchemaLocation };

export interface ReadSink {
  builder: RouteInputsBuilder;
  deferred: Deferred[];
}

const MAX_HELPER_DEPTH = 2;
const SCHEMA_CHECKS = new Set([
  "parse",
  "safeParse",
  "parseAsync",
  "safeParseAsync",
  "validate",
  "validateAsync",
  "validateSync",
  "cast",
  "check",
  "Check",
  "Decode",
]);
const RETURNS_DATA = new Set(["parse", "parseAsync", "validateSync", "cast", "Decode"]);

type Scope = Map<string, Origin[]>;

/** The parameter of a handler that is the request: the first, or the second of an error handler. */
export function requestIndexOf(fn: ts.FunctionLikeDeclaration): number {
  const first = fn.parameters[0]?.name;
  return fn.parameters.length >= 4 && first && ts.isIdentifier(first) && /^err/i.test(first.text) ? 1 : 0;
}

export class RequestReader {
  private readonly visiting = new Set<ts.Node>();

  constructor(
    private readonly model: JavaScriptFileModel,
    private readonly sink: ReadSink,
  ) {}

  /** Reads `fn` with its `requestIndex`-th parameter bound to the request. */
  readHandler(fn: ts.FunctionLikeDeclaration, requestIndex = requestIndexOf(fn)): void {
    const bound: Origin[][] = [];
    bound[requestIndex] = [{ kind: "request" }];
    this.readFunction(fn, bound, 0);
  }

  /** Reads one branch of a hand-written dispatcher: names bound anywhere in `fn`, reads inside `branch`. */
  readBranch(fn: ts.FunctionLikeDeclaration, branch: ts.Node): void {
    if (!fn.body) return;
    const scope: Scope = new Map();
    const request = fn.parameters[requestIndexOf(fn)];
    if (request) this.bind(request.name, [{ kind: "request" }], scope);
    const rawBody = { read: false };
    this.collectAliases(fn.body, scope, rawBody);
    this.collectReads(branch, scope, rawBody.read, 0);
  }

  /** Reads `fn` with parameters bound to what the caller passed. */
  readFunction(fn: ts.FunctionLikeDeclaration, parameters: Array<Origin[] | undefined>, depth: number): void {
    if (this.visiting.has(fn) || !fn.body) return;
    this.visiting.add(fn);
    const scope: Scope = new Map();
    fn.parameters.forEach((parameter, index) => {
      const origins = parameters[index];
      if (origins?.length) this.bind(parameter.name, origins, scope);
    });
    const rawBody = { read: false };
    this.collectAliases(fn.body, scope, rawBody);
    this.collectReads(fn.body, scope, rawBody.read, depth);
    this.visiting.delete(fn);
  }

  /** First pass, in source order: names bound to the request or a part of it. */
  private collectAliases(body: ts.Node, scope: Scope, rawBody: { read: boolean }): void {
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && node.initializer) {
        const origins = this.classify(node.initializer, scope, rawBody.read);
        if (origins.length > 0) this.bind(node.name, origins, scope);
      } else if (
        ts.isBinaryExpression(node) &&
        node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
        ts.isIdentifier(node.left)
      ) {
        const origins = this.classify(node.right, scope, rawBody.read);
        if (origins.length > 0) this.bind(node.left, origins, scope);
      } else if (ts.isCallExpression(node) && isRawBodyListener(node, scope, this)) {
        rawBody.read = true;
      } else if (ts.isForOfStatement(node) && node.awaitModifier && this.isRequest(node.expression, scope)) {
        rawBody.read = true;
      }
      ts.forEachChild(node, visit);
    };
    visit(body);
  }

  /** Second pass: every access to a field of a bag, every helper the request is handed to. */
  private collectReads(body: ts.Node, scope: Scope, rawBody: boolean, depth: number): void {
    const visit = (node: ts.Node): void => {
      if (isAccess(node) && !isAccessObject(node)) this.readAccess(node, scope, rawBody);
      if (ts.isIdentifier(node)) this.readAlias(node, scope);
      if (ts.isCallExpression(node)) this.readCall(node, scope, rawBody, depth);
      ts.forEachChild(node, visit);
    };
    visit(body);
  }

  isRequest(expression: ts.Expression, scope: Scope): boolean {
    return this.classify(expression, scope, false).some((origin) => origin.kind === "request");
  }

  private bind(name: ts.BindingName, origins: Origin[], scope: Scope): void {
    if (ts.isIdentifier(name)) {
      scope.set(name.text, [...(scope.get(name.text) ?? []), ...origins]);
      return;
    }
    if (!ts.isObjectBindingPattern(name)) return;
    for (const element of name.elements) {
      if (element.dotDotDotToken) {
        this.bind(element.name, origins, scope);
        continue;
      }
      const key = element.propertyName
        ? propertyName(element.propertyName)
        : ts.isIdentifier(element.name)
          ? element.name.text
          : undefined;
      if (key === undefined) continue;
      const children = origins.flatMap((origin) => member(origin, key));
      for (const child of children)
        if (child.kind === "bag") this.noteRead(child, defaultSchema(element.initializer));
      if (children.length > 0) this.bind(element.name, children, scope);
    }
  }

  /** What an expression denotes; empty when it has nothing to do with the request. */
  classify(expression: ts.Expression, scope: Scope, rawBody: boolean): Origin[] {
    const node = unwrap(expression);
    if (ts.isIdentifier(node)) return scope.get(node.text) ?? [];
    if (ts.isPropertyAccessExpression(node))
      return this.classify(node.expression, scope, rawBody).flatMap((origin) =>
        member(origin, node.name.text),
      );
    if (ts.isElementAccessExpression(node)) {
      const key = elementKey(node.argumentExpression);
      if (key === undefined) return [];
      return this.classify(node.expression, scope, rawBody).flatMap((origin) => member(origin, key));
    }
    if (ts.isConditionalExpression(node))
      return [
        ...this.classify(node.whenTrue, scope, rawBody),
        ...this.classify(node.whenFalse, scope, rawBody),
      ];
    if (
      ts.isBinaryExpression(node) &&
      (node.operatorToken.kind === ts.SyntaxKind.BarBarToken ||
        node.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken)
    )
      return [...this.classify(node.left, scope, rawBody), ...this.classify(node.right, scope, rawBody)];
    if (ts.isCallExpression(node)) return this.callOrigins(node, scope, rawBody);
    if (ts.isNewExpression(node)) return this.newOrigins(node, scope, rawBody);
    // `{ ...row, ...req.body }`, the partial update's merge: its fields are the whole bag's spread in it.
    if (ts.isObjectLiteralExpression(node))
      return node.properties.flatMap((property) =>
        ts.isSpreadAssignment(property)
          ? this.classify(property.expression, scope, rawBody).filter(
              (origin) => origin.kind === "bag" && origin.path.length === 0,
            )
          : [],
      );
    return [];
  }

  private callOrigins(call: ts.CallExpression, scope: Scope, rawBody: boolean): Origin[] {
    const callee = unwrap(call.expression);
    const first = call.arguments[0];
    const firstOrigins = first ? this.classify(first, scope, rawBody) : [];
    const name = ts.isPropertyAccessExpression(callee)
      ? callee.name.text
      : ts.isIdentifier(callee)
        ? callee.text
        : undefined;
    if (name === undefined) return [];
    if (ts.isPropertyAccessExpression(callee)) {
      const objects = this.classify(callee.expression, scope, rawBody);
      const results: Origin[] = [];
      for (const object of objects) {
        if (object.kind === "request") {
          const found = requestCall(name, call);
          if (found) results.push(found.origin);
          if (found?.encoding) this.sink.builder.encoding(found.encoding);
        }
        if (object.kind === "url" && /^(split|slice|substring|substr|replace)$/.test(name))
          results.push(object);
      }
      if (results.length > 0) return results;
      if (callee.expression.getText(this.model.source) === "JSON" && name === "parse") {
        if (rawBody || firstOrigins.length > 0) {
          this.sink.builder.encoding("json");
          return [bag("body")];
        }
        return [];
      }
      // A validated copy of a bag reads like the bag: `const data = schema.parse(req.body)` (but not
      // `schema.validate(req.body)`, which answers `{ error, value }`).
      if (RETURNS_DATA.has(name) && firstOrigins.some((origin) => origin.kind === "bag")) return firstOrigins;
    }
    if (name === "parse" || name === "urlParse") {
      if (firstOrigins.some((origin) => origin.kind === "url")) {
        const isQueryString =
          ts.isPropertyAccessExpression(callee) && /^(querystring|qs)$/.test(callee.expression.getText());
        return [isQueryString ? bag("query") : { kind: "parsedUrl" }];
      }
      if (
        rawBody &&
        ts.isPropertyAccessExpression(callee) &&
        /^(querystring|qs)$/.test(callee.expression.getText())
      ) {
        this.sink.builder.encoding("form");
        return [bag("body")];
      }
    }
    // `const { limit } = parseWith(Query, request.query)`: a validated copy of the bag it was handed.
    if (/pars|valid|check|sanitiz/i.test(name) && call.arguments.length >= 2) {
      const bags = call.arguments.flatMap((argument) => this.classify(argument, scope, rawBody));
      const whole = bags.filter((origin) => origin.kind === "bag" && origin.path.length === 0);
      if (whole.length > 0) return whole;
    }
    // `await readBody(req)`, `parseJson(request)`: a helper that reads the body for the handler.
    if (
      /body|json|payload|form/i.test(name) &&
      call.arguments.some((argument) => this.isRequest(argument, scope))
    ) {
      if (/json/i.test(name)) this.sink.builder.encoding("json");
      return [bag("body")];
    }
    return [];
  }

  private newOrigins(node: ts.NewExpression, scope: Scope, rawBody: boolean): Origin[] {
    const created = node.expression.getText(this.model.source);
    const first = node.arguments?.[0];
    const origins = first ? this.classify(first, scope, rawBody) : [];
    if (/(^|\.)URL$/.test(created) && origins.some((origin) => origin.kind === "url"))
      return [{ kind: "parsedUrl" }];
    if (/(^|\.)URLSearchParams$/.test(created)) {
      if (origins.some((origin) => origin.kind === "url")) return [{ kind: "searchParams", bag: "query" }];
      if (rawBody && first) {
        this.sink.builder.encoding("form");
        return [{ kind: "searchParams", bag: "body" }];
      }
    }
    return [];
  }

  private readAccess(
    access: ts.PropertyAccessExpression | ts.ElementAccessExpression,
    scope: Scope,
    rawBody: boolean,
  ): void {
    const parent = skipWrappers(access);
    if (ts.isCallExpression(parent) && unwrap(parent.expression) === access) {
      const name = ts.isPropertyAccessExpression(access)
        ? access.name.text
        : elementKey(access.argumentExpression);
      if (name !== undefined)
        this.readMethod(this.classify(access.expression, scope, rawBody), name, parent, scope);
      return;
    }
    // `title.length > 80` compares the value's length (see `member`), which says nothing of the value's type.
    const ownLength = ts.isPropertyAccessExpression(access) && access.name.text === "length";
    for (const origin of this.classify(access, scope, rawBody)) {
      if (origin.kind !== "bag") continue;
      this.noteRead(origin, ownLength && origin.path.at(-1) !== "length" ? undefined : hintAt(access));
    }
  }

  /**
   * A name bound to one field, used where its type shows: `Number.isInteger(amount)`, `amount < 1`,
   * `typeof title === "string"` after `const amount = req.body.amount`. The access itself was noted where
   * the name was bound; this adds what the use says of the type.
   */
  private readAlias(name: ts.Identifier, scope: Scope): void {
    const origins = scope.get(name.text);
    if (!origins) return;
    const hint = hintAt(name);
    if (!hint) return;
    for (const origin of origins)
      if (origin.kind === "bag" && origin.path.length > 0) this.noteRead(origin, hint);
  }

  private readMethod(objects: Origin[], name: string, call: ts.CallExpression, scope: Scope): void {
    const argument = staticString(call.arguments[0], this.model.bindings.constants);
    // `parseInt(url.searchParams.get("page"))`: the call's own context types what it answers.
    const hint = hintAt(call);
    const list = guessedSchema({ type: "array", items: { type: "string" } });
    for (const object of objects) {
      if (object.kind === "request") {
        const read = argument === undefined ? undefined : REQUEST_READS[name];
        if (read && argument !== undefined)
          this.noteRead({ kind: "bag", bag: read, path: [argument] }, name === "queries" ? list : hint);
        if (name === "json" || name === "parseBody" || name === "formData" || name === "text")
          this.sink.builder.readsBody();
      }
      if (object.kind === "searchParams" && argument !== undefined && /^(get|getAll|has)$/.test(name))
        this.noteRead({ kind: "bag", bag: object.bag, path: [argument] }, name === "getAll" ? list : hint);
      if (object.kind === "bag" && object.path.length === 0 && name === "get" && argument !== undefined)
        this.noteRead({ ...object, path: [argument] }, hint);
      if (object.kind === "bag" && object.path.length > 0) {
        const type = ARRAY_METHODS.has(name) ? "array" : STRING_METHODS.has(name) ? "string" : undefined;
        this.noteRead(object, type ? guessedSchema({ type }) : undefined);
      }
    }
    if (objects.length === 0) this.linkValidation(call, name, scope);
  }

  /** `schema.parse(req.body)`, `Joi.attempt(req.query, schema)`: the schema describes that bag. */
  private linkValidation(call: ts.CallExpression, name: string, scope: Scope): void {
    const callee = unwrap(call.expression);
    if (!ts.isPropertyAccessExpression(callee)) return;
    if (this.linkHelperValidation(call, scope)) return;
    const [first, second] = call.arguments;
    const attempt = (name === "attempt" || name === "assert") && second !== undefined;
    const subject = attempt ? first : SCHEMA_CHECKS.has(name) ? first : undefined;
    const schema = attempt ? second : callee.expression;
    if (!subject || !schema) return;
    const bags = this.classify(subject, scope, false).filter(
      (origin): origin is Extract<Origin, { kind: "bag" }> =>
        origin.kind === "bag" && origin.path.length === 0,
    );
    for (const found of bags) linkSchema(this.model, schema, found.bag, this.sink);
  }

  /**
   * A validation helper handed a schema and a whole bag: `parseWith(TaskCreate, request.body)`,
   * `validate(schema, req.query)`. Names that are not schemas are dropped when looked up.
   */
  private linkHelperValidation(call: ts.CallExpression, scope: Scope): boolean {
    if (call.arguments.length < 2) return false;
    const bags = call.arguments.flatMap((argument) =>
      this.classify(argument, scope, false).filter(
        (origin): origin is Extract<Origin, { kind: "bag" }> =>
          origin.kind === "bag" && origin.path.length === 0,
      ),
    );
    if (bags.length === 0) return false;
    let linked = false;
    for (const argument of call.arguments) {
      const value = unwrap(argument);
      if (!ts.isIdentifier(value) && !ts.isCallExpression(value)) continue;
      if (this.classify(value, scope, false).length > 0) continue;
      for (const found of bags) linked = linkSchema(this.model, value, found.bag, this.sink) || linked;
    }
    return linked;
  }

  private readCall(call: ts.CallExpression, scope: Scope, rawBody: boolean, depth: number): void {
    const callee = unwrap(call.expression);
    if (!ts.isIdentifier(callee)) return;
    this.linkHelperValidation(call, scope);
    // Hono's cookie helper: `getCookie(c, "session")`.
    if (callee.text === "getCookie" && call.arguments[0] && this.isRequest(call.arguments[0], scope)) {
      const name = staticString(call.arguments[1], this.model.bindings.constants);
      if (name !== undefined) this.noteRead({ kind: "bag", bag: "cookie", path: [name] });
      return;
    }
    if (depth >= MAX_HELPER_DEPTH) return;
    const helper = localCallable(this.model, callee.text);
    if (!helper || !isFunctionNode(helper)) return;
    const passed = call.arguments.map((argument) => this.classify(argument, scope, rawBody));
    if (passed.some((origins) => origins.length > 0)) this.readFunction(helper, passed, depth + 1);
  }

  private noteRead(origin: Extract<Origin, { kind: "bag" }>, hint?: JsonSchema): void {
    const { builder } = this.sink;
    if (origin.bag === "path") return;
    if (origin.bag === "body") {
      if (origin.path.length === 0) builder.readsBody();
      else builder.bodyField(origin.path, hint);
      return;
    }
    const [name, ...rest] = origin.path;
    if (name === undefined || name === "[]") return;
    const schema = rest.length > 0 ? nestedGuess(rest, hint) : hint;
    builder.parameter(origin.bag, name, schema);
  }
}

/** `schema` (a local validator, or an import looked up later) describes the request's `location`. */
export function linkSchema(
  model: JavaScriptFileModel,
  expression: ts.Expression,
  location: SchemaLocation,
  sink: ReadSink,
): boolean {
  const value = unwrap(expression);
  const imported = ts.isIdentifier(value) ? model.bindings.imports.get(value.text) : undefined;
  if (imported) {
    sink.deferred.push({ kind: "schema", file: model.file, reference: imported, location });
    return true;
  }
  const schema = validatorSchema(value, model.validators);
  if (!schema) return false;
  applySchema(sink.builder, schema, location);
  return true;
}

export function applySchema(builder: RouteInputsBuilder, schema: JsonSchema, location: SchemaLocation): void {
  if (location === "body") builder.bodySchema(schema);
  else if (location !== "path") builder.parametersFrom(location, schema);
}

/** `req.on("data", …)`: the handler reads the raw body itself. */
function isRawBodyListener(call: ts.CallExpression, scope: Scope, reader: RequestReader): boolean {
  const callee = unwrap(call.expression);
  if (!ts.isPropertyAccessExpression(callee) || callee.name.text !== "on") return false;
  const event = staticString(call.arguments[0], new Map());
  return event === "data" && reader.isRequest(callee.expression, scope);
}
