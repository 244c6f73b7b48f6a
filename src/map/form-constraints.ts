import type { FormInput, Operation, Page } from "./system-map.ts";

// A page's form states the domain of each field (a select's options, a number's bounds) even when the API
// behind it declares none: a scripted form that posts `{title, status, priority, estimate}` as JSON is the
// operation's own client. Its constraints join the operation's body schema, marked as the form's, so the
// fuzzer can ask whether the server enforces what its UI promises (CWE-602: client-side enforcement only).
// Only operations without a document take them (a document is the contract), only where the form and the
// body share most fields and the page and the operation share a resource noun, and only constraints no
// reader of the code already stated. Select options that are ids (an assignee picker) are data, not a
// domain: they grow with the rows.

const MIN_SHARED_FIELDS = 3;
const MIN_SHARED_SHARE = 0.6;
const NOISE_SEGMENT = /^(api|v\d+|rest|public|internal|new|edit|create|update|\{[^}]*\})$/i;
const CONTROL_TYPES = new Set(["hidden", "submit", "button", "reset", "image", "file"]);

type Schema = Record<string, unknown>;

/** `operations` with the constraints of the forms that feed each undocumented JSON body. */
export function withFormConstraints(operations: Operation[], pages: readonly Page[]): Operation[] {
  const forms = pages.flatMap((page) =>
    (page.forms ?? []).map((form) => ({
      page: page.path,
      inputs: (form.inputs ?? []).filter((input) => !CONTROL_TYPES.has(input.type.toLowerCase())),
    })),
  );
  if (forms.length === 0) return operations;
  return operations.map((operation) => {
    const properties = bodyProperties(operation);
    if (operation.documented || !properties) return operation;
    // The form on the page closest to the operation (most nouns in common) speaks first.
    const feeding = forms
      .filter((form) => feeds(form, operation, properties))
      .sort(
        (left, right) => sharedNouns(right.page, operation.path) - sharedNouns(left.page, operation.path),
      );
    if (feeding.length === 0) return operation;
    const constrained = constrain(properties, feeding);
    if (!constrained) return operation;
    const schema = operation.request_body!.schema as Schema;
    return {
      ...operation,
      request_body: { ...operation.request_body!, schema: { ...schema, properties: constrained } },
    };
  });
}

function bodyProperties(operation: Operation): Record<string, Schema> | undefined {
  const type = operation.request_body?.content_type?.toLowerCase() ?? "";
  const schema = operation.request_body?.schema as Schema | undefined;
  const properties = schema?.properties;
  if (!type.includes("json") || !properties || typeof properties !== "object") return undefined;
  return properties as Record<string, Schema>;
}

function feeds(
  form: { page: string; inputs: FormInput[] },
  operation: Operation,
  properties: Record<string, Schema>,
): boolean {
  const names = form.inputs.map((input) => input.name);
  const shared = names.filter((name) => name in properties);
  if (shared.length < MIN_SHARED_FIELDS || shared.length < names.length * MIN_SHARED_SHARE) return false;
  return sharedNouns(form.page, operation.path) > 0;
}

function sharedNouns(page: string, path: string): number {
  const pageNouns = new Set(nouns(page));
  return nouns(path).filter((noun) => pageNouns.has(noun)).length;
}

function nouns(path: string): string[] {
  return path
    .split("/")
    .filter((segment) => segment && !NOISE_SEGMENT.test(segment) && !/^\d+$/.test(segment))
    .map((segment) => segment.toLowerCase().replace(/s$/, ""));
}

/** The properties with each feeding form's constraints added where none is stated; undefined if none added. */
function constrain(
  properties: Record<string, Schema>,
  forms: ReadonlyArray<{ page: string; inputs: FormInput[] }>,
): Record<string, Schema> | undefined {
  const result: Record<string, Schema> = { ...properties };
  let added = false;
  for (const form of forms) {
    for (const input of form.inputs) {
      const current = result[input.name];
      if (!current) continue;
      const extra = constraintsOf(input, current);
      if (Object.keys(extra).length === 0) continue;
      result[input.name] = { ...current, ...extra, description: `constraint from the form on ${form.page}` };
      added = true;
    }
  }
  return added ? result : undefined;
}

function constraintsOf(input: FormInput, property: Schema): Schema {
  const type = input.type.toLowerCase();
  const extra: Schema = {};
  if (type === "select" && property.enum === undefined && (property.type ?? "string") === "string") {
    const options = (input.options ?? []).filter((option) => option !== "");
    // Numbers or ids are rows to pick from, not a fixed domain.
    if (options.length >= 2 && !options.some((option) => /^\d+$|^[0-9a-f-]{16,}$/i.test(option)))
      extra.enum = options;
  }
  if (type === "number" || type === "range") {
    const numeric = property.type === "number" || property.type === "integer";
    const min = Number(input.min);
    const max = Number(input.max);
    const lowStated = property.minimum !== undefined || property.exclusiveMinimum !== undefined;
    const highStated = property.maximum !== undefined || property.exclusiveMaximum !== undefined;
    if (numeric && input.min !== undefined && Number.isFinite(min) && !lowStated) extra.minimum = min;
    if (numeric && input.max !== undefined && Number.isFinite(max) && !highStated) extra.maximum = max;
  }
  return extra;
}
