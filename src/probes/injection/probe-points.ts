import type { Operation, SystemMap } from "../../map/system-map.ts";
import { isSafeWrite, updatesCaller } from "../api/operation-index.ts";
import { bodyKind, requestSchema } from "../api/request-builder.ts";
import type { InputPoint } from "../auditor/input-points.ts";
import { bodyEncoding, inputPoints, pointKey } from "../auditor/input-points.ts";
import type { ProbeTarget } from "../http/run-http.ts";
import { chooseBranch, propertiesOf, schemaType } from "../schema-values/json-schema.ts";

// The input points the injection probes test: every point the shared inventory gives (query, path and body
// fields; fields of crawled forms and links), plus the string fields it leaves out because a format says
// what they hold — a `uri` field is exactly where a server-side fetch or a redirect takes its target.

const FORMATTED = /^(uri|url|uri-reference|iri|hostname|idn-hostname)$/;

function formattedString(schema: Record<string, unknown> | undefined): boolean {
  if (!schema) return false;
  const chosen = chooseBranch(schema);
  return (
    schemaType(chosen) === "string" && typeof chosen.format === "string" && FORMATTED.test(chosen.format)
  );
}

export function injectionPoints(
  map: SystemMap,
  options: { includeWrites: boolean; operations?: ReadonlySet<Operation>; callerUpdates?: boolean },
): InputPoint[] {
  // A body point and its form-encoded twin are two points, as inputPoints keeps them.
  const keyOf = (point: InputPoint) =>
    `${pointKey(point)} ${point.in === "body" ? bodyEncoding(point.operation) : ""}`;
  const points = new Map(inputPoints(map, options).map((point) => [keyOf(point), point]));
  const add = (point: InputPoint) => {
    if (!points.has(keyOf(point))) points.set(keyOf(point), point);
  };
  for (const operation of map.operations) {
    if (options.operations && !options.operations.has(operation)) continue;
    const method = operation.method.toUpperCase();
    if (method === "DELETE" || method === "PUT" || method === "PATCH") continue;
    for (const parameter of operation.parameters) {
      if ((parameter.in === "query" || parameter.in === "path") && formattedString(parameter.schema))
        add({ operation, in: parameter.in, name: parameter.name, numeric: false });
    }
    if (method === "GET" || !options.includeWrites || bodyKind(operation) === "none") continue;
    const schema = requestSchema(operation);
    for (const [name, property] of Object.entries(schema ? propertiesOf(chooseBranch(schema)) : {})) {
      if (formattedString(property)) add({ operation, in: "body", name, numeric: false });
    }
  }
  return [...points.values()];
}

/**
 * Whether a probe may send to the operation at all. Reads always; writes that only add (imports, restores
 * of a saved state the probe supplies) on a managed target, which is reset for every run; elsewhere only
 * writes the shared write policy calls safe. An update of the signed-in account itself only `byOwnAccount`.
 */
export function mayProbe(
  target: ProbeTarget,
  operation: Operation,
  options: { byOwnAccount?: boolean } = {},
): boolean {
  const method = operation.method.toUpperCase();
  if (method === "GET" || method === "HEAD") return true;
  if (!target.writesAllowed || (updatesCaller(operation) && !options.byOwnAccount)) return false;
  if (method === "POST" && target.mode === "managed") return true;
  return isSafeWrite(operation, options);
}

/** The words that describe a point: its name, and the operation's path, id and summary. */
export function pointWords(point: InputPoint): { name: string; operation: string } {
  const operation = point.operation;
  return {
    name: point.name.split(".").at(-1) ?? point.name,
    operation: [
      operation.path,
      operation.operation_id ?? "",
      operation.summary ?? "",
      ...(operation.tags ?? []),
    ]
      .join(" ")
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .toLowerCase(),
  };
}

/**
 * The file parts of multipart writes (`<input type=file>`, a document's `format: binary`): the name a
 * browser sends with a file is the client's to choose, and servers that keep it write where it says.
 */
export function filePartPoints(operations: readonly Operation[]): InputPoint[] {
  return operations.flatMap((operation) => {
    const body = operation.request_body;
    if (!body?.content_type?.toLowerCase().startsWith("multipart/form-data")) return [];
    if (["GET", "HEAD", "OPTIONS"].includes(operation.method.toUpperCase())) return [];
    const properties = (
      body.schema as { properties?: Record<string, { format?: string; items?: { format?: string } }> }
    ).properties;
    return Object.entries(properties ?? {})
      .filter(([, schema]) => schema.format === "binary" || schema.items?.format === "binary")
      .map(([name]): InputPoint => ({ operation, in: "body", name, numeric: false }));
  });
}
