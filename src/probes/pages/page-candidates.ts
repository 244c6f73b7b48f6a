import type { OperationCandidate } from "../../map/inventory.ts";
import type { FormInput, Page, Parameter } from "../../map/system-map.ts";
import type { CrawledPage } from "./crawl-pages.ts";
import { isCsrfFieldName } from "./csrf.ts";
import { NEVER_FOLLOW } from "./urls.ts";

// What crawled pages tell the operation inventory: each form is an operation with the fields a browser
// would send (typed from its controls), each link and page a GET with the query parameters it carries.
// Feed it each role's visits (`CrawlResult.visits`) so an operation is offered only to the roles that saw it.

/** Static files a link may point at: not operations. Data files (`.json`, `.csv`) are kept: exports are. */
const STATIC_FILE =
  /\.(?:png|jpe?g|gif|svg|ico|webp|avif|bmp|css|m?js|map|pdf|zip|gz|tgz|tar|rar|7z|mp[34]|webm|ogg|wav|woff2?|ttf|otf|eot|wasm)$/i;
/** Values not worth keeping as examples in a saved map. */
const SECRET_NAME = /pass|secret|token|session|auth|key|signature|sig$|otp|code$/i;

export function candidatesFromPages(pages: readonly (Page | CrawledPage)[]): OperationCandidate[] {
  const merged = new Map<string, OperationCandidate>();
  const add = (candidate: OperationCandidate): void => {
    const key = `${candidate.provenance} ${candidate.method} ${candidate.path}`;
    const known = merged.get(key);
    merged.set(key, known ? mergeCandidates(known, candidate) : candidate);
  };
  for (const page of pages) {
    const roles = page.roles ?? [];
    if (page.status !== undefined && page.status < 300) add(linkCandidate(page.path, roles));
    for (const link of page.links) {
      if (!link.startsWith("/") || NEVER_FOLLOW.test(link) || STATIC_FILE.test(pathPart(link))) continue;
      add(linkCandidate(link, roles));
    }
    for (const form of page.forms) {
      if (!form.action.startsWith("/")) continue;
      add(formCandidate(form, page, roles));
    }
  }
  return [...merged.values()];
}

/** The JSON Schema of the body a form sends: one property per control, typed from it. */
export function formBodySchema(inputs: readonly FormInput[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const input of inputs) {
    properties[input.name] = inputSchema(input);
    if (input.required) required.push(input.name);
  }
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}

/** One control's value as a JSON Schema: what the browser would let a person type or pick. */
export function inputSchema(input: FormInput): Record<string, unknown> {
  const schema: Record<string, unknown> = { type: "string" };
  switch (input.type) {
    case "number":
    case "range": {
      schema.type = "number";
      const minimum = Number.parseFloat(input.min ?? "");
      const maximum = Number.parseFloat(input.max ?? "");
      if (Number.isFinite(minimum)) schema.minimum = minimum;
      if (Number.isFinite(maximum)) schema.maximum = maximum;
      break;
    }
    case "email":
      schema.format = "email";
      break;
    case "url":
      schema.format = "uri";
      break;
    case "date":
      schema.format = "date";
      break;
    case "time":
      schema.format = "time";
      break;
    case "password":
      schema.format = "password";
      break;
    case "color":
      schema.pattern = "^#[0-9a-fA-F]{6}$";
      break;
    case "file":
      schema.format = "binary";
      break;
    case "checkbox":
    case "radio":
    case "select":
      // A checkbox sends its value when ticked and nothing otherwise: a one-value string, absent when off.
      if (input.options?.length) schema.enum = [...input.options];
      break;
    case "select-multiple":
      return {
        type: "array",
        items: input.options?.length ? { type: "string", enum: [...input.options] } : {},
      };
  }
  if (input.maxlength !== undefined) schema.maxLength = input.maxlength;
  if (input.pattern) schema.pattern = `^(?:${input.pattern})$`;
  if (input.value !== undefined && input.type !== "file") {
    schema.default =
      schema.type === "number" && Number.isFinite(Number(input.value)) ? Number(input.value) : input.value;
  }
  return schema;
}

/** The anti-forgery field a form sends: its hidden token input, else the field the page's meta tag names. */
export function csrfFieldOf(inputs: readonly FormInput[], page: Page | CrawledPage): string | undefined {
  const field =
    inputs.find((input) => input.type === "hidden" && isCsrfFieldName(input.name)) ??
    inputs.find((input) => isCsrfFieldName(input.name));
  if (field) return field.name;
  return "csrf" in page ? page.csrf?.param : undefined;
}

function formCandidate(
  form: Page["forms"][number],
  page: Page | CrawledPage,
  roles: string[],
): OperationCandidate {
  const inputs = form.inputs ?? form.fields.map((name) => ({ name, type: "text", required: false }));
  const enctype = form.enctype ?? "application/x-www-form-urlencoded";
  const csrfField = csrfFieldOf(inputs, page);
  const candidate: OperationCandidate = {
    method: form.method.toUpperCase(),
    path: pathPart(form.action),
    provenance: "form",
    concrete: true,
    roles: [...roles],
    form: { page: page.path, enctype, ...(csrfField ? { csrf_field: csrfField } : {}) },
  };
  if (candidate.method === "GET") {
    // A GET form replaces the action's query with its fields.
    candidate.parameters = inputs.map((input) => ({
      name: input.name,
      in: "query",
      required: input.required,
      schema: inputSchema(input),
    }));
  } else {
    const query = queryParameters(form.action);
    if (query.length > 0) candidate.parameters = query;
    candidate.request_body = { content_type: enctype, required: true, schema: formBodySchema(inputs) };
  }
  return candidate;
}

function linkCandidate(link: string, roles: string[]): OperationCandidate {
  const candidate: OperationCandidate = {
    method: "GET",
    path: pathPart(link),
    provenance: "link",
    concrete: true,
    roles: [...roles],
  };
  const query = queryParameters(link);
  if (query.length > 0) candidate.parameters = query;
  return candidate;
}

function queryParameters(reference: string): Parameter[] {
  const query = reference.split("#")[0]?.split("?").slice(1).join("?") ?? "";
  if (!query) return [];
  const parameters: Parameter[] = [];
  for (const [name, value] of new URLSearchParams(query)) {
    if (!name || parameters.some((parameter) => parameter.name === name)) continue;
    const parameter: Parameter = { name, in: "query", required: false, schema: { type: "string" } };
    if (!SECRET_NAME.test(name)) parameter.example = value;
    parameters.push(parameter);
  }
  return parameters;
}

function pathPart(reference: string): string {
  return reference.split(/[?#]/)[0] || "/";
}

function mergeCandidates(known: OperationCandidate, incoming: OperationCandidate): OperationCandidate {
  const merged: OperationCandidate = {
    ...known,
    roles: [...new Set([...(known.roles ?? []), ...(incoming.roles ?? [])])],
  };
  const parameters = [...(known.parameters ?? [])];
  for (const parameter of incoming.parameters ?? [])
    if (!parameters.some((entry) => entry.name === parameter.name && entry.in === parameter.in))
      parameters.push(parameter);
  if (parameters.length > 0) merged.parameters = parameters;
  if (known.request_body && incoming.request_body) {
    const first = known.request_body.schema as { properties?: Record<string, unknown>; required?: string[] };
    const second = incoming.request_body.schema as {
      properties?: Record<string, unknown>;
      required?: string[];
    };
    merged.request_body = {
      ...known.request_body,
      schema: {
        type: "object",
        properties: { ...second?.properties, ...first?.properties },
        // A field is required only when every form that sends here requires it.
        ...intersectRequired(first?.required, second?.required),
      },
    };
  } else {
    merged.request_body = known.request_body ?? incoming.request_body;
  }
  if (!merged.request_body) delete merged.request_body;
  return merged;
}

function intersectRequired(
  first: string[] | undefined,
  second: string[] | undefined,
): { required?: string[] } {
  const both = (first ?? []).filter((name) => (second ?? []).includes(name));
  return both.length > 0 ? { required: both } : {};
}
