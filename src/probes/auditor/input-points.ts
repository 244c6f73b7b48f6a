import type { Operation, SystemMap } from "../../map/system-map.ts";
import { bodyKind, requestSchema } from "../api/request-builder.ts";
import { matchesTemplate, toTemplateForm } from "../http/target-url.ts";
import { chooseBranch, propertiesOf, schemaType } from "../schema-values/json-schema.ts";

/** One place a string (or number) from the client reaches the server. */
export interface InputPoint {
  operation: Operation;
  in: "query" | "path" | "body";
  /** Parameter name, or a body field path (`address.city`). */
  name: string;
  numeric: boolean;
  /** The page that showed this input (a form or a link), when it came from the crawl. */
  page?: string;
}

export function pointKey(point: InputPoint): string {
  return `${point.operation.method.toUpperCase()} ${toTemplateForm(point.operation.path)} ${point.in}:${point.name}`;
}

function isNumeric(schema: Record<string, unknown> | undefined): boolean {
  const type = schema ? schemaType(chooseBranch(schema)) : "string";
  return type === "integer" || type === "number";
}

function accepts(schema: Record<string, unknown> | undefined): boolean {
  if (!schema) return true;
  const chosen = chooseBranch(schema);
  const type = schemaType(chosen);
  if (type === "boolean" || type === "array" || type === "object" || type === "null") return false;
  if (Array.isArray(chosen.enum)) return false;
  return !(
    typeof chosen.format === "string" && /^(uuid|date|date-time|email|uri|ipv4|ipv6)$/.test(chosen.format)
  );
}

/** Operations built from a page's forms and query links, for routes the document does not describe. */
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
      const known = existing(method, path);
      const operation: Operation = known ?? {
        method,
        path,
        security: "unknown",
        parameters: [],
        responses: {},
        seen_in: ["crawl"],
        documented: false,
        ...(method === "GET"
          ? {}
          : {
              request_body: {
                content_type: "application/x-www-form-urlencoded",
                required: true,
                schema: {
                  type: "object",
                  properties: Object.fromEntries(form.fields.map((field) => [field, { type: "string" }])),
                },
              },
            }),
      };
      result.push({
        operation,
        page: page.path,
        fields: form.fields,
        in: method === "GET" ? "query" : "body",
      });
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
        seen_in: ["crawl" as const],
        documented: false,
      };
      result.push({ operation, page: page.path, fields: [...url.searchParams.keys()], in: "query" });
    }
  }
  return result;
}

/** Every input point of the map: parameters and body fields of operations, and fields of crawled pages. */
export function inputPoints(
  map: SystemMap,
  options: { includeWrites: boolean; operations?: ReadonlySet<Operation> },
): InputPoint[] {
  const points = new Map<string, InputPoint>();
  const add = (point: InputPoint) => {
    const key = pointKey(point);
    if (!points.has(key)) points.set(key, point);
  };
  for (const operation of map.operations) {
    if (options.operations && !options.operations.has(operation)) continue;
    const method = operation.method.toUpperCase();
    if (method === "DELETE" || method === "PUT" || method === "PATCH") continue;
    for (const parameter of operation.parameters) {
      if ((parameter.in === "query" || parameter.in === "path") && accepts(parameter.schema)) {
        add({ operation, in: parameter.in, name: parameter.name, numeric: isNumeric(parameter.schema) });
      }
    }
    if (
      method !== "GET" &&
      options.includeWrites &&
      (bodyKind(operation) === "json" || bodyKind(operation) === "form")
    ) {
      const schema = requestSchema(operation);
      for (const [name, property] of Object.entries(schema ? propertiesOf(chooseBranch(schema)) : {})) {
        if (accepts(property)) add({ operation, in: "body", name, numeric: isNumeric(property) });
      }
    }
  }
  for (const { operation, page, fields, in: where } of pageOperations(map)) {
    if (options.operations && !options.operations.has(operation) && operation.documented) continue;
    if (where === "body" && !options.includeWrites) continue;
    for (const field of fields) add({ operation, in: where, name: field, numeric: false, page });
  }
  return [...points.values()];
}
