import type { GraphqlOperation, Operation, Parameter, Provenance } from "./system-map.ts";

// The operation inventory: every operation the application serves, composed from every source MAPPER can
// read. Each reader (the OpenAPI document, source routes, forms and links crawled as each role, the
// frontend bundle, observed traffic, GraphQL schemas) contributes candidates; this file merges them, so a
// probe sees one operation per method and path, with everything learned about it and where it came from.

/** What one reader learned about one operation. `path` is a `{param}` template or a concrete path. */
export interface OperationCandidate {
  /** Upper-case method; `ALL` for a route that answers any method. */
  method: string;
  path: string;
  provenance: Provenance;
  /** Whether `path` is a template (source, documents) or a concrete path that may hold ids (links, traffic). */
  concrete?: boolean;
  parameters?: Parameter[];
  request_body?: Operation["request_body"];
  handler?: Operation["handler"];
  roles?: string[];
  form?: Operation["form"];
  graphql?: GraphqlOperation;
  security?: Operation["security"];
}

/** How far each source is trusted for a body's encoding: what the document says, then what a browser sends. */
const BODY_PRECEDENCE: Provenance[] = [
  "openapi",
  "graphql",
  "form",
  "traffic",
  "frontend",
  "source",
  "link",
  "crawl",
];

/**
 * Merges candidates into operations: documented operations first, then templates (source, GraphQL), then
 * concrete paths, each matched against what is already known before it adds anything.
 */
export function composeInventory(
  documented: readonly Operation[],
  candidates: readonly OperationCandidate[],
): Operation[] {
  const operations: Operation[] = documented.map((operation) => ({
    ...operation,
    seen_in: [...operation.seen_in],
    parameters: operation.parameters.map((parameter) => ({ ...parameter })),
  }));
  const ordered = [...candidates].sort((a, b) => Number(a.concrete ?? false) - Number(b.concrete ?? false));
  for (const candidate of ordered) {
    if (candidate.graphql) {
      mergeGraphql(operations, candidate);
      continue;
    }
    const method = candidate.method.toUpperCase() === "*" ? "ALL" : candidate.method.toUpperCase();
    const path = candidate.concrete ? templateOfConcrete(candidate.path, operations) : candidate.path;
    const samePath = operations.filter(
      (operation) => !operation.graphql && templateKey(operation.path) === templateKey(path),
    );
    const exact = samePath.filter((operation) => operation.method === method);
    const matches =
      method === "ALL"
        ? samePath
        : exact.length > 0
          ? exact
          : samePath.filter((operation) => operation.method === "ALL");
    if (matches.length === 0) {
      operations.push(newOperation({ ...candidate, method, path }));
      continue;
    }
    for (const operation of matches) {
      // A route for any method is replaced by the concrete method a form or a call shows it is used with.
      if (operation.method === "ALL" && method !== "ALL") {
        const concrete = newOperation({ ...candidate, method, path: operation.path });
        mergeInto(concrete, { ...operationAsCandidate(operation), method });
        operations.push(concrete);
        continue;
      }
      mergeInto(operation, candidate);
    }
  }
  return settleAnyMethod(operations);
}

/** Provenance counts, for `qaas doctor`, the bench and the map summary. */
export function inventoryByProvenance(operations: readonly Operation[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const operation of operations)
    for (const source of new Set(operation.seen_in)) counts[source] = (counts[source] ?? 0) + 1;
  return counts;
}

/** Readers that name templates; any other template was itself guessed from concrete ids. */
const TEMPLATE_SOURCES: ReadonlySet<Provenance> = new Set(["openapi", "source", "graphql"]);

/**
 * A concrete path as a template: an existing operation's template it fits, else ids turned into `{id}`.
 * A template someone declared (a document, a route in code) takes any value in its parameters; one guessed
 * from concrete ids only takes ids, so `/products/search` does not fold into a guessed `/products/{id}`.
 */
export function templateOfConcrete(
  path: string,
  known: readonly (Pick<Operation, "path"> & { seen_in?: readonly Provenance[] })[],
): string {
  const clean = (path.split(/[?#]/)[0] ?? path).replace(/\/+$/, "") || "/";
  const fitting = known
    .filter((operation) => {
      const declared = !operation.seen_in || operation.seen_in.some((source) => TEMPLATE_SOURCES.has(source));
      return fitsTemplate(operation.path, clean, declared);
    })
    // The most specific template wins: `/items/new` over `/items/{id}`.
    .sort((a, b) => staticSegments(b.path) - staticSegments(a.path));
  if (fitting[0]) return fitting[0].path;
  let counter = 0;
  const segments = clean.split("/").map((segment) => {
    if (!looksLikeId(segment)) return segment;
    counter += 1;
    return counter === 1 ? "{id}" : `{id${counter}}`;
  });
  return segments.join("/") || "/";
}

/** Numbers, UUIDs, long hex or base64-ish tokens and ObjectIds: values, not route names. */
export function looksLikeId(segment: string): boolean {
  if (segment === "") return false;
  return (
    /^-?\d+$/.test(segment) ||
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(segment) ||
    /^[0-9a-f]{16,}$/i.test(segment) ||
    (/^[A-Za-z0-9_-]{20,}$/.test(segment) && /\d/.test(segment) && /[A-Za-z]/.test(segment))
  );
}

function fitsTemplate(template: string, concrete: string, declared: boolean): boolean {
  const wanted = template.replace(/\/+$/, "").split("/");
  const actual = concrete.split("/");
  if (wanted.length !== actual.length) return false;
  return wanted.every((segment, index) => {
    const value = actual[index] ?? "";
    if (!/^\{[^}]+\}$/.test(segment)) return segment === value;
    return declared || looksLikeId(value);
  });
}

function staticSegments(template: string): number {
  return template.split("/").filter((segment) => segment !== "" && !segment.startsWith("{")).length;
}

function templateKey(path: string): string {
  const withoutTrailing = path.length > 1 ? path.replace(/\/+$/, "") : path;
  return withoutTrailing.replace(/\{[^}]*\}/g, "{}") || "/";
}

function newOperation(candidate: OperationCandidate): Operation {
  const operation: Operation = {
    method: candidate.method,
    path: candidate.path,
    security: candidate.security ?? "unknown",
    parameters: [],
    responses: {},
    seen_in: [],
    documented: false,
  };
  for (const name of [...candidate.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? "")) {
    operation.parameters.push({ name, in: "path", required: true });
  }
  mergeInto(operation, candidate);
  return operation;
}

function mergeInto(operation: Operation, candidate: OperationCandidate): void {
  if (!operation.seen_in.includes(candidate.provenance)) operation.seen_in.push(candidate.provenance);
  for (const parameter of candidate.parameters ?? [])
    mergeParameter(operation, parameter, candidate.provenance);
  if (candidate.request_body) mergeBody(operation, candidate.request_body, candidate.provenance);
  if (candidate.handler && !operation.handler) operation.handler = candidate.handler;
  if (candidate.form && !operation.form) operation.form = candidate.form;
  if (candidate.roles?.length)
    operation.roles = [...new Set([...(operation.roles ?? []), ...candidate.roles])];
  if (operation.security === "unknown" && candidate.security) operation.security = candidate.security;
}

function mergeParameter(operation: Operation, parameter: Parameter, provenance: Provenance): void {
  // A path parameter's name follows the operation's template, whatever the other source called it.
  if (parameter.in === "path") return;
  const existing = operation.parameters.find(
    (entry) => entry.in === parameter.in && entry.name === parameter.name,
  );
  if (!existing) {
    operation.parameters.push({ ...parameter, seen_in: [provenance] });
    return;
  }
  existing.schema ??= parameter.schema;
  if (existing.example === undefined && parameter.example !== undefined) existing.example = parameter.example;
  if (existing.seen_in && !existing.seen_in.includes(provenance)) existing.seen_in.push(provenance);
}

function mergeBody(
  operation: Operation,
  body: NonNullable<Operation["request_body"]>,
  provenance: Provenance,
): void {
  const current = operation.request_body;
  if (!current) {
    operation.request_body = { ...body };
    bodyOrigin.set(operation, provenance);
    return;
  }
  const currentRank = BODY_PRECEDENCE.indexOf(bodyOrigin.get(operation) ?? "openapi");
  const incomingRank = BODY_PRECEDENCE.indexOf(provenance);
  // A document's own definitions are the contract; anything else read it from a handler or a page.
  const declared = currentRank <= BODY_PRECEDENCE.indexOf("graphql");
  const merged = mergeObjectSchemas(current.schema, body.schema, !declared);
  if (incomingRank < currentRank) {
    operation.request_body = { ...body, schema: merged ?? body.schema };
    bodyOrigin.set(operation, provenance);
  } else if (merged) {
    operation.request_body = { ...current, schema: merged };
  }
  if (current.example === undefined && body.example !== undefined && operation.request_body)
    operation.request_body.example = body.example;
}

/** Which source set an operation's body encoding (kept beside the operation, not in the saved map). */
const bodyOrigin = new WeakMap<Operation, Provenance>();

/**
 * The union of two object schemas' properties; the first's definition of a property wins, unless `fill`
 * and it says no more than a type where the second's says more (a form's `number` with its `min` over a
 * handler's bare read of the field).
 */
function mergeObjectSchemas(
  first: Record<string, unknown> | undefined,
  second: Record<string, unknown> | undefined,
  fill = false,
): Record<string, unknown> | undefined {
  if (!first || !second) return first ?? second;
  const firstProperties = first.properties as Record<string, unknown> | undefined;
  const secondProperties = second.properties as Record<string, unknown> | undefined;
  if (!firstProperties || !secondProperties) return first;
  const required = new Set([
    ...((first.required as string[] | undefined) ?? []),
    ...((second.required as string[] | undefined) ?? []),
  ]);
  const properties: Record<string, unknown> = { ...secondProperties, ...firstProperties };
  for (const [name, definition] of Object.entries(secondProperties))
    if (fill && bareType(firstProperties[name]) && !bareType(definition)) properties[name] = definition;
  return {
    ...first,
    type: first.type ?? "object",
    properties,
    ...(required.size > 0 ? { required: [...required] } : {}),
  };
}

/** A property definition that names at most its type. */
function bareType(definition: unknown): boolean {
  return (
    typeof definition === "object" &&
    definition !== null &&
    Object.keys(definition).every((key) => key === "type")
  );
}

function mergeGraphql(operations: Operation[], candidate: OperationCandidate): void {
  const graphql = candidate.graphql!;
  const existing = operations.find(
    (operation) =>
      operation.graphql?.field === graphql.field &&
      operation.graphql.kind === graphql.kind &&
      templateKey(operation.path) === templateKey(candidate.path),
  );
  if (existing) {
    mergeInto(existing, candidate);
    return;
  }
  const operation = newOperation({ ...candidate, method: candidate.method.toUpperCase() });
  operation.graphql = graphql;
  operation.operation_id ??= `${graphql.kind}.${graphql.field}`;
  operations.push(operation);
}

function operationAsCandidate(operation: Operation): OperationCandidate {
  return {
    method: operation.method,
    path: operation.path,
    provenance: operation.seen_in[0] ?? "source",
    parameters: operation.parameters,
    request_body: operation.request_body,
    handler: operation.handler,
    roles: operation.roles,
    form: operation.form,
    security: operation.security,
  };
}

/**
 * An `ALL` route whose path now has concrete methods from forms or calls adds nothing a probe can send; one
 * that has none is sent as a browser would reach it: GET, or POST when the handler reads a body. A request
 * whose method is the word `ALL` is nothing a person could replay.
 */
function settleAnyMethod(operations: Operation[]): Operation[] {
  const concretePaths = new Set(
    operations
      .filter((operation) => operation.method !== "ALL" && !operation.graphql)
      .map((operation) => templateKey(operation.path)),
  );
  return operations
    .filter((operation) => operation.method !== "ALL" || !concretePaths.has(templateKey(operation.path)))
    .map((operation) =>
      operation.method === "ALL"
        ? { ...operation, method: operation.request_body ? "POST" : "GET" }
        : operation,
    );
}
