import type { OperationCandidate } from "../../map/inventory.ts";
import type { Parameter } from "../../map/system-map.ts";
import type { CrawledPage } from "../pages/crawl-pages.ts";
import { csrfFieldOf, formBodySchema } from "../pages/page-candidates.ts";
import type { ApiCall } from "./api-calls.ts";

// The frontend's requests as inventory candidates: one per method and path template (parameter names
// aside), with the query parameters and body fields every call to it showed. A call that sends a page's
// form (`$("#buy-form").serialize()`) takes that form's fields, page and CSRF field from the crawl.

export function candidatesFromApiCalls(
  calls: readonly ApiCall[],
  pages: readonly Pick<CrawledPage, "path" | "forms" | "roles">[] = [],
): OperationCandidate[] {
  const byKey = new Map<string, OperationCandidate>();
  for (const original of calls) {
    const call = withFormFields(original, pages);
    const key = `${call.method} ${call.path.replace(/\{[^}]*\}/g, "{}")}`;
    const candidate = byKey.get(key) ?? {
      method: call.method,
      path: call.path,
      provenance: "frontend" as const,
      // A path with no hole may still hold an id written in the code (`/api/users/1`).
      concrete: !call.path.includes("{"),
    };
    byKey.set(key, candidate);
    for (const entry of call.query) {
      candidate.parameters ??= [];
      const parameters = candidate.parameters;
      if (parameters.some((parameter) => parameter.in === "query" && parameter.name === entry.name)) continue;
      const parameter: Parameter = {
        name: entry.name,
        in: "query",
        required: false,
        schema: { type: "string" },
      };
      if (entry.example !== undefined) parameter.example = entry.example;
      parameters.push(parameter);
    }
    if (call.form && !candidate.form) candidate.form = call.form;
    if (call.roles?.length) candidate.roles = [...new Set([...(candidate.roles ?? []), ...call.roles])];
    if (call.body) {
      const current = candidate.request_body;
      if (!current) {
        candidate.request_body = {
          content_type: call.body.contentType,
          required: true,
          ...(call.body.schema ? { schema: call.body.schema } : {}),
        };
      } else if (call.body.schema) {
        current.schema = unionSchemas(current.schema, call.body.schema);
      }
    }
  }
  return [...byKey.values()];
}

function unionSchemas(
  first: Record<string, unknown> | undefined,
  second: Record<string, unknown>,
): Record<string, unknown> {
  if (!first) return second;
  const properties = {
    ...(second.properties as Record<string, unknown> | undefined),
    ...(first.properties as Record<string, unknown> | undefined),
  };
  return { ...first, properties };
}

/** A call sending a page's form, with that form's fields and where to load it for a fresh token. */
function withFormFields(
  call: ApiCall,
  pages: readonly Pick<CrawledPage, "path" | "forms" | "roles">[],
): ApiCall & { form?: OperationCandidate["form"]; roles?: string[] } {
  const formId = call.body?.formId;
  if (!call.body || !formId) return call;
  for (const page of pages) {
    const form = page.forms.find((candidate) => candidate.id === formId && candidate.inputs);
    if (!form?.inputs) continue;
    const csrfField = csrfFieldOf(form.inputs, page as CrawledPage);
    return {
      ...call,
      body: { ...call.body, schema: formBodySchema(form.inputs) },
      form: {
        page: page.path,
        enctype: call.body.contentType,
        ...(csrfField ? { csrf_field: csrfField } : {}),
      },
      // Whoever is served the form is offered the call that sends it.
      roles: pages
        .filter((other) => other.forms.some((candidate) => candidate.id === formId))
        .flatMap((other) => other.roles ?? [])
        .filter((role, index, all) => all.indexOf(role) === index),
    };
  }
  return call;
}
