import type { Operation, SystemMap } from "../../map/system-map.ts";
import { updatesCaller } from "../api/operation-index.ts";
import { graphqlEffect } from "../graphql/graphql-effect.ts";
import { matchesTemplate, toTemplateForm } from "../http/target-url.ts";
import type { JsonSchema } from "../schema-values/json-schema.ts";
import {
  asSchema,
  chooseBranch,
  forDirection,
  propertiesOf,
  schemaType,
} from "../schema-values/json-schema.ts";

// Every place a value from the client reaches the server, whatever taught the map the operation: query,
// path, body fields (nested objects and array items, JSON, urlencoded and multipart forms, GraphQL variables),
// and the headers and cookies the inventory says the handler reads. Injection probes (SQL, XSS, commands…)
// share these points and the request helpers in point-request.ts.

export type PointLocation = "query" | "path" | "body" | "header" | "cookie";

/** One place a string (or number) from the client reaches the server. */
export interface InputPoint {
  operation: Operation;
  in: PointLocation;
  /**
   * Parameter, header or cookie name, or a body field path: dotted, with array items by index
   * (`address.city`, `ids.0`, `items.0.sku`).
   */
  name: string;
  numeric: boolean;
  /** The page that showed this input (a form or a link), when it came from the crawl. */
  page?: string;
  /** Allowed values the document lists (an enum): still worth a try, they make a good baseline. */
  choices?: string[];
}

export interface InputPointOptions {
  includeWrites: boolean;
  operations?: ReadonlySet<Operation>;
  /** Only these locations (default: all). */
  locations?: ReadonlyArray<PointLocation>;
  /** Header and cookie names never to tamper with (the session's own credential, e.g. `x-api-key`). */
  reserved?: ReadonlyArray<string>;
  /** Updates of the caller itself too (`POST /profile`): only for a probe that sends them as its own account. */
  callerUpdates?: boolean;
}

export function pointKey(point: InputPoint): string {
  return `${point.operation.method.toUpperCase()} ${toTemplateForm(point.operation.path)} ${pointTag(point)}`;
}

/**
 * `query q`, `body name` — or, for a GraphQL field, `argument host of mutation importData`: every field of a
 * GraphQL API shares one endpoint, so the field is what tells a person (and a ticket) where the input is.
 */
export function pointPlace(point: Pick<InputPoint, "operation" | "in" | "name">): string {
  const graphql = point.operation.graphql;
  return graphql ? `argument ${point.name} of ${graphql.kind} ${graphql.field}` : `${point.in} ${point.name}`;
}

/**
 * `in:name` for a finding's discriminator (with `@field` for a GraphQL field): two defects of one class at
 * one endpoint stay two, and two GraphQL fields behind one endpoint are two places.
 */
export function pointTag(point: Pick<InputPoint, "operation" | "in" | "name">): string {
  const graphql = point.operation.graphql;
  return `${point.in}:${point.name}${graphql ? `@${graphql.field}` : ""}`;
}

/** Whether a body is sent as a form (urlencoded or multipart), as JSON, or not at all. */
export function bodyEncoding(operation: Operation): "json" | "form" | "multipart" | "none" | "other" {
  const type = operation.request_body?.content_type.toLowerCase();
  if (!type) return operation.form && operation.method.toUpperCase() !== "GET" ? "form" : "none";
  if (type.includes("json")) return "json";
  if (type.includes("x-www-form-urlencoded")) return "form";
  if (type.includes("multipart/form-data")) return "multipart";
  return "other";
}

// Headers a browser or the HTTP layer owns, and those that carry a session: tampering with them tests the
// sign-in, not the handler.
const RESERVED_HEADER =
  /^(authorization|cookie|host|content-(type|length|encoding)|accept(-encoding)?|connection|transfer-encoding|x-(csrf|xsrf)-token|x-requested-with|x-api-key|api-key|x-(auth|access|session)-token)$/i;

/**
 * A cookie that carries the sign-in (an auth helper reads it on every route): tampering with it tests the
 * session, which the token and cookie probes do, not the handler's input.
 */
const SESSION_COOKIE =
  /^(session|sessionid|session_id|sid|connect\.sid|jsessionid|phpsessid|jwt|token|access_token|auth_?token|remember_?token|.+[_-]session)$/i;

/** A form's anti-forgery token: the browser layer fills it, a probe leaves it alone. */
const ANTI_FORGERY_FIELD = /csrf|xsrf|authenticity_token|__requestverificationtoken|nonce/i;

function isNumeric(schema: JsonSchema | undefined): boolean {
  const type = schema ? schemaType(chooseBranch(schema)) : "string";
  return type === "integer" || type === "number";
}

/** Scalars a client could type: strings and numbers (enums included), not booleans or files. */
function isScalarInput(schema: JsonSchema | undefined): boolean {
  if (!schema) return true;
  const chosen = chooseBranch(schema);
  const type = schemaType(chosen);
  if (type === "boolean" || type === "array" || type === "object" || type === "null") return false;
  return chosen.format !== "binary" && chosen.format !== "byte";
}

function choicesOf(schema: JsonSchema | undefined): string[] | undefined {
  const values = schema ? chooseBranch(schema).enum : undefined;
  return Array.isArray(values) && values.length > 0
    ? values.filter((value) => value !== null).map(String)
    : undefined;
}

const MAX_BODY_DEPTH = 4;

/** Field paths of a body schema: scalars, nested objects, and the first item of arrays. */
function bodyFields(schema: JsonSchema, prefix = "", depth = 0): Array<{ name: string; schema: JsonSchema }> {
  if (depth > MAX_BODY_DEPTH) return [];
  const fields: Array<{ name: string; schema: JsonSchema }> = [];
  for (const [name, property] of Object.entries(propertiesOf(chooseBranch(schema)))) {
    const path = `${prefix}${name}`;
    fields.push(...fieldsOf(property, path, depth));
  }
  return fields;
}

function fieldsOf(
  schema: JsonSchema,
  path: string,
  depth: number,
): Array<{ name: string; schema: JsonSchema }> {
  const chosen = chooseBranch(schema);
  const type = schemaType(chosen);
  if (type === "object") return bodyFields(chosen, `${path}.`, depth + 1);
  if (type === "array") return fieldsOf(asSchema(chosen.items), `${path}.0`, depth + 1);
  return isScalarInput(chosen) ? [{ name: path, schema: chosen }] : [];
}

/** Operations built from a page's forms and query links, for routes the map does not describe. */
function pageOperations(
  map: SystemMap,
): Array<{ operation: Operation; page: string; fields: string[]; in: "query" | "body" }> {
  const result: Array<{ operation: Operation; page: string; fields: string[]; in: "query" | "body" }> = [];
  const base = map.base_url ?? "http://localhost";
  const existing = (method: string, path: string) =>
    map.operations.find(
      (operation) =>
        operation.method.toUpperCase() === method && matchesTemplate(operation.path, path) !== undefined,
    );
  for (const page of map.pages) {
    for (const form of page.forms) {
      let path: string;
      try {
        path = new URL(form.action || page.path, new URL(page.path, base)).pathname;
      } catch {
        continue;
      }
      const method = (form.method || "GET").toUpperCase();
      const fields = form.inputs
        ? form.inputs
            .filter((input) => !/^(submit|button|image|reset|file|checkbox|radio)$/i.test(input.type))
            .map((input) => input.name)
            .filter((name) => !ANTI_FORGERY_FIELD.test(name))
        : form.fields.filter((name) => !ANTI_FORGERY_FIELD.test(name));
      const operation: Operation = existing(method, path) ?? {
        method,
        path,
        security: "unknown",
        parameters: [],
        responses: {},
        seen_in: ["form"],
        documented: false,
        form: {
          page: page.path,
          enctype: form.enctype ?? "application/x-www-form-urlencoded",
        },
        ...(method === "GET"
          ? {}
          : {
              request_body: {
                content_type: form.enctype ?? "application/x-www-form-urlencoded",
                required: true,
                schema: {
                  type: "object",
                  properties: Object.fromEntries(form.fields.map((field) => [field, { type: "string" }])),
                },
              },
            }),
      };
      result.push({ operation, page: page.path, fields, in: method === "GET" ? "query" : "body" });
    }
    for (const link of [page.path, ...page.links]) {
      let url: URL;
      try {
        url = new URL(link, new URL(page.path, base));
      } catch {
        continue;
      }
      if (url.origin !== new URL(base).origin || url.searchParams.size === 0) continue;
      const operation = existing("GET", url.pathname) ?? {
        method: "GET",
        path: url.pathname,
        security: "unknown" as const,
        parameters: [],
        responses: {},
        seen_in: ["link" as const],
        documented: false,
      };
      result.push({ operation, page: page.path, fields: [...url.searchParams.keys()], in: "query" });
    }
  }
  return result;
}

/**
 * A JSON body the map only inferred from handler code (no document, no form seen): the handler may as well
 * read a form post (Flask's `request.form`, Express's `urlencoded()`), and a field sent in the wrong
 * encoding never reaches it, so its flat fields are also tried as a form post.
 */
function guessedEncoding(operation: Operation): boolean {
  return (
    bodyEncoding(operation) === "json" &&
    !operation.documented &&
    !operation.form &&
    !operation.graphql &&
    !operation.seen_in.includes("openapi")
  );
}

function asFormPost(operation: Operation): Operation {
  const body = operation.request_body!;
  return { ...operation, request_body: { ...body, content_type: "application/x-www-form-urlencoded" } };
}

/** Whether a probe may send this operation at all: no deletes, no replacing of what it did not create. */
function probeable(operation: Operation, options: InputPointOptions): boolean {
  const method = operation.method.toUpperCase();
  if (method === "DELETE" || method === "PUT" || method === "PATCH") return false;
  if (updatesCaller(operation) && !options.callerUpdates) return false;
  const includeWrites = options.includeWrites;
  if (operation.graphql) {
    // A GraphQL read travels as a POST but changes nothing: the write policy does not hold it back.
    const effect = graphqlEffect(operation.graphql);
    return effect === "read" || (includeWrites && effect !== "destructive");
  }
  return method === "GET" || method === "HEAD" || includeWrites;
}

/**
 * Every input point of the map: parameters (query, path, header, cookie) and body fields of operations of
 * any provenance, and fields of crawled pages' forms and links.
 */
export function inputPoints(map: SystemMap, options: InputPointOptions): InputPoint[] {
  const points = new Map<string, InputPoint>();
  const wanted = (where: PointLocation) => !options.locations || options.locations.includes(where);
  const reserved = new Set((options.reserved ?? []).map((name) => name.toLowerCase()));
  const add = (point: InputPoint) => {
    if (!wanted(point.in)) return;
    const key = `${pointKey(point)} ${point.in === "body" ? bodyEncoding(point.operation) : ""}`;
    if (!points.has(key)) points.set(key, point);
  };
  for (const operation of map.operations) {
    if (options.operations && !options.operations.has(operation)) continue;
    if (!probeable(operation, options)) continue;
    const page = operation.form?.page;
    for (const parameter of operation.parameters) {
      if (!isScalarInput(parameter.schema)) continue;
      const name = parameter.name;
      if (
        (parameter.in === "header" || parameter.in === "cookie") &&
        (reserved.has(name.toLowerCase()) ||
          (parameter.in === "header" && RESERVED_HEADER.test(name)) ||
          (parameter.in === "cookie" && SESSION_COOKIE.test(name)))
      )
        continue;
      add({
        operation,
        in: parameter.in,
        name,
        numeric: isNumeric(parameter.schema),
        choices: choicesOf(parameter.schema),
        ...(page ? { page } : {}),
      });
    }
    const encoding = bodyEncoding(operation);
    if (operation.method.toUpperCase() === "GET" || !["json", "form", "multipart"].includes(encoding))
      continue;
    const raw = operation.request_body?.schema;
    const schema = raw ? forDirection(asSchema(raw), "request") : undefined;
    const csrfField = operation.form?.csrf_field;
    const formTwin = guessedEncoding(operation) ? asFormPost(operation) : undefined;
    for (const field of schema ? bodyFields(schema) : []) {
      if (field.name === csrfField || ANTI_FORGERY_FIELD.test(field.name)) continue;
      const point = {
        in: "body" as const,
        name: field.name,
        numeric: isNumeric(field.schema),
        choices: choicesOf(field.schema),
        ...(page ? { page } : {}),
      };
      add({ operation, ...point });
      if (formTwin && !field.name.includes(".")) add({ operation: formTwin, ...point });
    }
  }
  for (const { operation, page, fields, in: where } of pageOperations(map)) {
    if (options.operations && !options.operations.has(operation) && operation.documented) continue;
    if (!probeable(operation, options)) continue;
    for (const field of fields) add({ operation, in: where, name: field, numeric: false, page });
  }
  return [...points.values()];
}
