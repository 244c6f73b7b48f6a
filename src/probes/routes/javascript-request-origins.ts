import ts from "typescript";
import { staticString, unwrap } from "./javascript-syntax.ts";
import { guessedSchema, type JsonSchema } from "./route-inputs.ts";

// The vocabulary of request reads: what a member of the request or of a part of it denotes (`req.query`,
// `ctx.request.body`, `url.searchParams`), and what type a read's context implies (`parseInt(…)`,
// `{ page = 1 }`, `.map(…)`). javascript-request-reads.ts walks handlers with it.

export type Bag = "query" | "body" | "header" | "cookie" | "path";

/** What an expression of the handler denotes, as far as the request goes. */
export type Origin =
  | { kind: "request" }
  | { kind: "bag"; bag: Bag; path: string[] }
  /** The raw request URL or a part of it (`req.url`, `url.search`, `req.url.split("?")[1]`). */
  | { kind: "url" }
  /** `url.parse(req.url, true)`, `new URL(req.url, base)`. */
  | { kind: "parsedUrl" }
  /** A `URLSearchParams` over the query string, or over a form body read by hand. */
  | { kind: "searchParams"; bag: "query" | "body" };

export const ARRAY_METHODS = new Set([
  "map",
  "forEach",
  "filter",
  "reduce",
  "some",
  "every",
  "find",
  "findIndex",
  "join",
  "flatMap",
]);
export const STRING_METHODS = new Set([
  "toLowerCase",
  "toUpperCase",
  "trim",
  "split",
  "replace",
  "replaceAll",
  "startsWith",
  "endsWith",
  "match",
  "substr",
  "substring",
  "padStart",
  "charAt",
  "normalize",
  "localeCompare",
]);
export const CONVERSIONS: Record<string, JsonSchema> = {
  parseInt: { type: "integer" },
  BigInt: { type: "integer" },
  parseFloat: { type: "number" },
  Number: { type: "number" },
  Boolean: { type: "boolean" },
};
/** `Array.isArray(x)`, `Number.isInteger(x)`: checks that say what type the handler wants. */
const TYPE_CHECKS: Record<string, JsonSchema> = {
  isArray: { type: "array" },
  isInteger: { type: "integer" },
  isSafeInteger: { type: "integer" },
};
const TYPEOF_SCHEMAS: Record<string, JsonSchema> = {
  boolean: { type: "boolean" },
  number: { type: "number" },
  string: { type: "string" },
  object: { type: "object", properties: {} },
};
export const REQUEST_MEMBERS: Record<string, Origin> = {
  query: { kind: "bag", bag: "query", path: [] },
  body: { kind: "bag", bag: "body", path: [] },
  headers: { kind: "bag", bag: "header", path: [] },
  header: { kind: "bag", bag: "header", path: [] },
  cookies: { kind: "bag", bag: "cookie", path: [] },
  signedCookies: { kind: "bag", bag: "cookie", path: [] },
  params: { kind: "bag", bag: "path", path: [] },
  request: { kind: "request" },
  req: { kind: "request" },
  url: { kind: "url" },
  originalUrl: { kind: "url" },
  // Next.js: `request.nextUrl.searchParams.get("q")`.
  nextUrl: { kind: "parsedUrl" },
};

/** Methods of a request that read one named value: Express `req.get("X")`, Hono `c.req.query("q")`. */
export const REQUEST_READS: Record<string, Bag> = {
  get: "header",
  header: "header",
  query: "query",
  queries: "query",
  cookie: "cookie",
};

/** Hono's request methods: `c.req.json()`, `c.req.parseBody()`, `c.req.valid("query")`, `c.req.query()`. */
export function requestCall(
  name: string,
  call: ts.CallExpression,
): { origin: Origin; encoding?: "json" | "form" } | undefined {
  if (name === "json") return { origin: bag("body"), encoding: "json" };
  if (name === "parseBody" || name === "formData") return { origin: bag("body"), encoding: "form" };
  if (name === "valid") {
    const target = staticString(call.arguments[0], new Map()) ?? "json";
    return {
      origin: bag(
        target === "query"
          ? "query"
          : target === "header"
            ? "header"
            : target === "cookie"
              ? "cookie"
              : target === "param"
                ? "path"
                : "body",
      ),
    };
  }
  if (name === "query" && call.arguments.length === 0) return { origin: bag("query") };
  return undefined;
}

export function bag(name: Bag): Origin {
  return { kind: "bag", bag: name, path: [] };
}

export function member(origin: Origin, name: string): Origin[] {
  switch (origin.kind) {
    case "request": {
      const found = REQUEST_MEMBERS[name];
      return found ? [found] : [];
    }
    case "parsedUrl":
      if (name === "query") return [bag("query")];
      if (name === "searchParams") return [{ kind: "searchParams", bag: "query" }];
      if (name === "search" || name === "href") return [{ kind: "url" }];
      return [];
    case "url":
      return [origin];
    case "bag":
      // `req.body.tags.length` is the value's own property, not a field inside it.
      if (name === "length" && origin.path.length > 0) return [origin];
      return [{ ...origin, path: [...origin.path, name] }];
    default:
      return [];
  }
}

export function elementKey(argument: ts.Expression): string | undefined {
  const value = unwrap(argument);
  if (ts.isNumericLiteral(value)) return "[]";
  return staticString(value, new Map());
}

export function isAccess(node: ts.Node): node is ts.PropertyAccessExpression | ts.ElementAccessExpression {
  return ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node);
}

/** Whether `node` is the object of a longer access (`req.body` in `req.body.name`). */
export function isAccessObject(node: ts.Node): boolean {
  const parent = node.parent;
  return parent !== undefined && isAccess(parent) && parent.expression === node;
}

export function skipWrappers(node: ts.Node): ts.Node {
  let current = node.parent;
  while (
    current &&
    (ts.isParenthesizedExpression(current) || ts.isAsExpression(current) || ts.isNonNullExpression(current))
  )
    current = current.parent;
  return current;
}

/**
 * The expression whose context tells a read's type: the read itself, or what wraps it without changing
 * what it is — a fallback (`req.query.limit ?? ""`, `|| "0"`) and `String(…)`.
 */
function typedUse(access: ts.Node): ts.Node {
  let node = access;
  for (;;) {
    const parent = skipWrappers(node);
    const fallback =
      ts.isBinaryExpression(parent) &&
      unwrap(parent.left) === node &&
      (parent.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken ||
        parent.operatorToken.kind === ts.SyntaxKind.BarBarToken);
    const stringified =
      ts.isCallExpression(parent) &&
      ts.isIdentifier(unwrap(parent.expression)) &&
      (unwrap(parent.expression) as ts.Identifier).text === "String" &&
      parent.arguments[0] !== undefined &&
      unwrap(parent.arguments[0]) === node;
    if (!fallback && !stringified) return node;
    node = parent;
  }
}

/** A type a read's context implies: `parseInt(req.query.page)`, `+req.query.n`, `req.query.n > 5`. */
export function hintAt(read: ts.Node): JsonSchema | undefined {
  const access = typedUse(read);
  const parent = skipWrappers(access);
  if (ts.isCallExpression(parent) && parent.arguments[0] && unwrap(parent.arguments[0]) === access) {
    const callee = unwrap(parent.expression);
    const name = ts.isIdentifier(callee)
      ? callee.text
      : ts.isPropertyAccessExpression(callee)
        ? callee.name.text
        : "";
    const schema = CONVERSIONS[name] ?? TYPE_CHECKS[name];
    if (schema) return guessedSchema({ ...schema });
  }
  // `typeof req.body.active !== "boolean"`: the handler checks the JSON type it wants.
  if (ts.isTypeOfExpression(parent)) {
    const comparison = skipWrappers(parent);
    if (ts.isBinaryExpression(comparison)) {
      const other = unwrap(comparison.left === parent ? comparison.right : comparison.left);
      const type = ts.isStringLiteralLike(other) ? TYPEOF_SCHEMAS[other.text] : undefined;
      if (type) return guessedSchema({ ...type });
    }
  }
  if (ts.isPrefixUnaryExpression(parent) && parent.operator === ts.SyntaxKind.PlusToken)
    return guessedSchema({ type: "number" });
  if (ts.isBinaryExpression(parent)) {
    const other = parent.left === access ? parent.right : parent.left;
    const relational = [
      ts.SyntaxKind.LessThanToken,
      ts.SyntaxKind.GreaterThanToken,
      ts.SyntaxKind.LessThanEqualsToken,
      ts.SyntaxKind.GreaterThanEqualsToken,
    ].includes(parent.operatorToken.kind);
    if (relational && ts.isNumericLiteral(unwrap(other))) return guessedSchema({ type: "number" });
  }
  return undefined;
}

/** The schema a destructuring default implies: `{ page = 1 }` is an integer. */
export function defaultSchema(initializer: ts.Expression | undefined): JsonSchema | undefined {
  const value = initializer && unwrap(initializer);
  if (!value) return undefined;
  if (ts.isNumericLiteral(value))
    return guessedSchema({ type: Number.isInteger(Number(value.text)) ? "integer" : "number" });
  if (value.kind === ts.SyntaxKind.TrueKeyword || value.kind === ts.SyntaxKind.FalseKeyword)
    return guessedSchema({ type: "boolean" });
  if (ts.isArrayLiteralExpression(value)) return guessedSchema({ type: "array" });
  if (ts.isObjectLiteralExpression(value)) return guessedSchema({ type: "object", properties: {} });
  return undefined;
}

export function nestedGuess(path: string[], leaf: JsonSchema | undefined): JsonSchema {
  let schema = leaf ?? guessedSchema();
  for (let index = path.length - 1; index >= 0; index -= 1) {
    const segment = path[index] as string;
    schema =
      segment === "[]"
        ? guessedSchema({ type: "array", items: schema })
        : guessedSchema({ type: "object", properties: { [segment]: schema } });
  }
  return schema;
}
