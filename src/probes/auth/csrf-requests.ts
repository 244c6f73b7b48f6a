import { randomBytes } from "node:crypto";
import type { Operation } from "../../map/system-map.ts";
import { bodyKind, buildRequest, requestSchema } from "../api/request-builder.ts";
import { uniqueSeed } from "../api/resource-factory.ts";
import { withEveryFormField } from "../auditor/form-body.ts";
import type { HttpRequestSpec } from "../http/http-types.ts";
import { namedFieldValue } from "../http/missing-fields.ts";
import { fillPath, joinUrl, pathParameterNames } from "../http/target-url.ts";
import { isCsrfFieldName } from "../pages/csrf.ts";
import { propertiesOf } from "../schema-values/json-schema.ts";
import { csrfControl } from "../session/csrf.ts";
import { formRequest } from "../session/form-submission.ts";
import type { HtmlForm } from "../session/html-forms.ts";
import { formDefaults, submitButton } from "../session/html-forms.ts";

// The requests another site can make a signed-in browser send: a top-level form POST, urlencoded or
// multipart (or text/plain carrying a JSON document, the classic trick against JSON endpoints that do not
// check their content type). No custom header can be added, the page's CSRF token is unknown, and the
// browser says where the request came from (Origin, Sec-Fetch-Site) — so an application that checks those
// is rightly not flagged.

/** The origin the forged requests claim to come from: a reserved name nobody can own. */
export const FOREIGN_ORIGIN = "https://csrf-attacker.invalid";

/**
 * `get-link`: the form's fields in the query of a top-level GET (a link, a redirect, `location = …`), which
 * a handler that reads any method's parameters (`router.all`, `$_REQUEST`, `methods=["GET","POST"]`) acts
 * on. Browsers send SameSite=Lax cookies with it, and frameworks skip their token check for GET.
 */
export type ForgeryShape = "form-without-token" | "form-with-wrong-token" | "text-plain-json" | "get-link";

export interface ForgedRequest {
  shape: ForgeryShape;
  spec: HttpRequestSpec;
  /** The inert value planted in every free-text field, looked for afterwards. */
  marker: string;
  /** The fields that carried the marker (request names). */
  markedFields: string[];
}

/** What a cross-site request to `operation` can carry: a form's fields, or a JSON body's properties. */
export interface ForgeryTemplate {
  operation: Operation;
  url: string;
  /** form: a form the application's page shows; body: the operation's documented or inferred body. */
  kind: "form" | "body";
  enctype: string;
  /** The fields a browser submits (CSRF token removed). */
  fields: Array<[string, string]>;
  /** The fields a marker can go in (free text). */
  textFields: string[];
  /** Marked fields that hold a telephone number: their marker is digits. */
  phoneFields?: string[];
  /** An edit form's current values of the marked fields (the record as it is, to put back). */
  current?: Record<string, string>;
  csrfField?: string;
  /** A real token's length, so a wrong one looks like one. */
  csrfLength?: number;
  /** A JSON body, when the operation may read one (tried as text/plain, which a form can send). */
  json?: Record<string, unknown>;
}

const FREE_TEXT_CONTROL = new Set(["text", "textarea", "search", "tel", ""]);
/** Fields that grant or prove access: an operation that takes one is never forged (it cannot be put back). */
const SECRET_FIELD = /pass(word)?|passwd|pwd|secret|otp|pin$|role|admin|permission|scope|owner/i;
/**
 * Fields naming the account: a form that shows their current value is re-sent with it unchanged (the
 * marker goes elsewhere); a body whose current value is unknown is never forged.
 */
const IDENTITY_FIELD = /e-?mail|user_?name|login/i;
const PHONE_FIELD = /phone|mobile|\btel\b/i;
/** Operations whose effect cannot be undone or judged by a marker; never forged. */
const DESTRUCTIVE_WORDS =
  /delete|remove|destroy|purge|drop|erase|wipe|revoke|cancel|deactivate|disable|transfer|withdraw|pay(ment)?s?\b|log-?out|sign-?out/i;

/** A cross-site forgery template from the form the signed-in page shows, or undefined when it has no free text. */
export function templateFromForm(operation: Operation, form: HtmlForm): ForgeryTemplate | undefined {
  const csrf = csrfControl(form, operation.form?.csrf_field) ?? csrfControl(form);
  const controls = form.controls.filter((control) => control.name !== csrf?.name);
  if (controls.some((control) => control.type === "password" || SECRET_FIELD.test(control.name)))
    return undefined;
  const identities = controls.filter(
    (control) => control.type === "email" || IDENTITY_FIELD.test(control.name),
  );
  if (identities.some((control) => control.value === "")) return undefined;
  const fields = formDefaults(form).filter(([name]) => name !== csrf?.name);
  const button = submitButton(form);
  if (button?.name) fields.push([button.name, button.value]);
  const marked = controls.filter(
    (control) => FREE_TEXT_CONTROL.has(control.type.toLowerCase()) && !identities.includes(control),
  );
  if (marked.length === 0) return undefined;
  for (const control of marked)
    if (!fields.some(([field]) => field === control.name)) fields.push([control.name, ""]);
  // An edit form shows the record as it is: what to put back after a forged change took.
  const editing = controls.some((control) => control.type !== "hidden" && control.value !== "");
  return {
    operation,
    url: form.action,
    kind: "form",
    enctype: form.enctype || "application/x-www-form-urlencoded",
    fields,
    textFields: marked.map((control) => control.name),
    phoneFields: marked
      .filter((control) => control.type === "tel" || PHONE_FIELD.test(control.name))
      .map((control) => control.name),
    ...(editing
      ? { current: Object.fromEntries(marked.map((control) => [control.name, control.value])) }
      : {}),
    ...(csrf ? { csrfField: csrf.name, csrfLength: csrf.value.length } : {}),
  };
}

/**
 * A template from the operation's documented or inferred body. An inferred content type is a guess (a
 * handler may read form fields and JSON alike), so both the form a browser sends and text/plain JSON are
 * tried; a CSRF-named property is the token, left out or made wrong, never marked.
 */
export function templateFromBody(baseUrl: string, operation: Operation): ForgeryTemplate | undefined {
  const kind = bodyKind(operation);
  if (kind !== "json" && kind !== "form") return undefined;
  // A form is sent whole, as a browser sends it: the page's own values and an email every validator takes.
  const prepared = withEveryFormField(buildRequest(operation, { seed: uniqueSeed() }));
  const properties = propertiesOf(requestSchema(operation) ?? {});
  if (Object.keys(properties).some((name) => SECRET_FIELD.test(name) || IDENTITY_FIELD.test(name)))
    return undefined;
  const csrfField = Object.keys(properties).find(isCsrfFieldName);
  const body = Object.fromEntries(
    Object.entries(
      prepared.body && typeof prepared.body === "object" && !Array.isArray(prepared.body)
        ? (prepared.body as Record<string, unknown>)
        : {},
    ).filter(([name]) => name !== csrfField),
  );
  const freeText = Object.keys(properties).filter((name) => {
    const property = properties[name]!;
    return (
      name !== csrfField &&
      property.type === "string" &&
      !property.format &&
      !property.enum &&
      !property.pattern
    );
  });
  // A field the page fills in itself (a price, a product name shown beside the form) keeps that value: the
  // handler may parse it, and the marker needs only one field that is stored as typed.
  const prefilled = (name: string) =>
    properties[name]!.default !== undefined || properties[name]!.example !== undefined;
  const textFields = freeText.some((name) => !prefilled(name))
    ? freeText.filter((name) => !prefilled(name))
    : freeText;
  if (textFields.length === 0) return undefined;
  for (const name of textFields) body[name] ??= "";
  const fields = Object.entries(body).map(([name, value]): [string, string] => [
    name,
    typeof value === "string" ? value : JSON.stringify(value),
  ]);
  return {
    operation,
    url: joinUrl(baseUrl, fillPath(operation.path, prepared.pathValues)),
    kind: "body",
    enctype: "application/x-www-form-urlencoded",
    fields,
    textFields,
    phoneFields: textFields.filter((name) => PHONE_FIELD.test(name)),
    ...(csrfField ? { csrfField, csrfLength: 32 } : {}),
    ...(kind === "json" ? { json: body } : {}),
  };
}

/** Whether an operation is one a forged request may be tried on: POST, no unfilled path parameter, not destructive. */
export function forgeable(operation: Operation): boolean {
  if (operation.method.toUpperCase() !== "POST" || operation.graphql) return false;
  if (pathParameterNames(operation.path).length > 0) return false;
  const words = [operation.path, operation.summary, operation.operation_id].filter(Boolean).join(" ");
  return !DESTRUCTIVE_WORDS.test(words);
}

/** Every shape worth trying on the template, most telling first. */
export function forgeryShapes(template: ForgeryTemplate): ForgeryShape[] {
  const shapes: ForgeryShape[] = ["form-without-token"];
  if (template.csrfField) shapes.push("form-with-wrong-token");
  if (template.json) shapes.push("text-plain-json");
  return shapes;
}

/** Whether the template's fields fit in a link's query (no file parts). */
export function linkable(template: ForgeryTemplate): boolean {
  return !template.enctype.toLowerCase().startsWith("multipart/");
}

/**
 * The template with `names` added (each with a plausible value), for a handler whose answer said they were
 * missing: a form posted by script may need fields no page or document lists. A field that grants or proves
 * access, or a CSRF token, is never made up: the forgery then counts as refused.
 */
export function withMissingFields(
  template: ForgeryTemplate,
  names: readonly string[],
): ForgeryTemplate | undefined {
  // An answer asking for the CSRF token is the defence working: a made-up token would hide that.
  if (names.length === 0 || names.some((name) => SECRET_FIELD.test(name) || isCsrfFieldName(name)))
    return undefined;
  const seed = uniqueSeed();
  const added = names.map((name): [string, string] => [name, namedFieldValue(name, seed)]);
  return {
    ...template,
    fields: [...template.fields, ...added],
    ...(template.json ? { json: { ...template.json, ...Object.fromEntries(added) } } : {}),
  };
}

/** The request of `shape`, an inert marker in every free-text field (or `values` in the fields they name). */
export function forge(
  template: ForgeryTemplate,
  shape: ForgeryShape,
  values?: Record<string, string>,
): ForgedRequest {
  const marker = newMarker();
  const phone = phoneMarker();
  const fill = (name: string, value: unknown) =>
    values
      ? (values[name] ?? value)
      : template.phoneFields?.includes(name)
        ? phone
        : template.textFields.includes(name)
          ? marker
          : value;
  let spec: HttpRequestSpec;
  if (shape === "get-link") {
    const url = new URL(template.url);
    for (const [name, value] of template.fields) url.searchParams.append(name, String(fill(name, value)));
    spec = { method: "GET", url: url.toString(), headers: { accept: "text/html,*/*;q=0.8" } };
  } else if (shape === "text-plain-json") {
    const body = Object.fromEntries(
      Object.entries(template.json ?? {}).map(([name, value]) => [name, fill(name, value)]),
    );
    spec = {
      method: "POST",
      url: template.url,
      headers: { "content-type": "text/plain", accept: "*/*" },
      body: JSON.stringify(body),
    };
  } else {
    const fields: Array<[string, string]> = template.fields.map(([name, value]) => [
      name,
      String(fill(name, value)),
    ]);
    if (shape === "form-with-wrong-token" && template.csrfField) {
      fields.push([template.csrfField, wrongToken(template.csrfLength ?? 32)]);
    }
    spec = formRequest({
      url: template.url,
      method: "POST",
      enctype: template.enctype,
      fields,
      seed: marker,
    });
  }
  const markers = template.textFields.some((name) => !template.phoneFields?.includes(name)) ? marker : phone;
  return {
    shape,
    spec: crossSite(spec, shape !== "get-link"),
    marker: markers,
    markedFields: [...template.textFields],
  };
}

/** A telephone-shaped marker (a reserved 555 number with random digits), for fields that accept digits only. */
function phoneMarker(): string {
  return `+1555${String(randomBytes(4).readUInt32BE(0) % 10_000_000).padStart(7, "0")}`;
}

export function newMarker(): string {
  return `qaascsrf${randomBytes(5).toString("hex")}`;
}

/**
 * What a browser adds to a request another site starts: fetch metadata saying so, and that site's origin
 * on a form post (a GET navigation carries no Origin).
 */
function crossSite(spec: HttpRequestSpec, withOrigin: boolean): HttpRequestSpec {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.headers ?? {})) {
    if (!["origin", "referer"].includes(name.toLowerCase())) headers[name] = value;
  }
  if (withOrigin) headers.origin = FOREIGN_ORIGIN;
  headers["sec-fetch-site"] = "cross-site";
  headers["sec-fetch-mode"] = "navigate";
  headers["sec-fetch-dest"] = "document";
  return { ...spec, headers };
}

function wrongToken(length: number): string {
  return randomBytes(Math.ceil(Math.max(length, 16) / 2))
    .toString("hex")
    .slice(0, Math.max(length, 16));
}
