import type { PreparedRequest } from "../api/request-builder.ts";
import { requestSchema } from "../api/request-builder.ts";
import { chooseBranch, propertiesOf } from "../schema-values/json-schema.ts";
import { exampleOf, PRIVILEGED_PROPERTY, validValue } from "../schema-values/valid-value.ts";
import { bodyEncoding } from "./input-points.ts";

// A form-encoded body as a browser submits it. A browser sends every control of a form, not only the
// `required` ones: hidden and read-only controls carry the page's own values (a price, a product id), and a
// handler that reads them all refuses a submission missing one before any query runs, so a probe of any
// field would only ever see that refusal. Server-side validators behind HTML forms are also stricter than
// API schemas: an address such as `x@example.test` fails the common "two or three letter TLD" patterns, so
// emails go to `example.com`, reserved for documentation like `.test` (RFC 2606) and accepted everywhere.

const ANTI_FORGERY_FIELD = /csrf|xsrf|authenticity_token|__requestverificationtoken|nonce/i;
const EMAIL_NAME = /e-?mail$/i;

export function withEveryFormField(prepared: PreparedRequest): PreparedRequest {
  const encoding = bodyEncoding(prepared.operation);
  if (encoding !== "form" && encoding !== "multipart") return prepared;
  const body = prepared.body;
  if (!body || typeof body !== "object" || Array.isArray(body)) return prepared;
  const schema = requestSchema(prepared.operation);
  if (!schema) return prepared;
  const seed = prepared.seed ?? "qaas";
  const filled: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const [name, property] of Object.entries(propertiesOf(chooseBranch(schema)))) {
    if (ANTI_FORGERY_FIELD.test(name)) continue;
    const shown = exampleOf(property);
    if (filled[name] === undefined) {
      // A value the page itself rendered is sent whatever the field is called; an empty field the user
      // would type into is filled only when it cannot grant anything (see PRIVILEGED_PROPERTY).
      if (shown !== undefined) filled[name] = shown;
      else if (!PRIVILEGED_PROPERTY.test(name)) filled[name] = validValue(property, { seed, name });
    }
    if (isEmail(name, property) && typeof filled[name] === "string" && shown === undefined) {
      filled[name] = `qaas-${seed}@example.com`;
    }
  }
  return { ...prepared, body: filled };
}

function isEmail(name: string, property: Record<string, unknown>): boolean {
  const format = chooseBranch(property).format;
  return format === "email" || format === "idn-email" || (format === undefined && EMAIL_NAME.test(name));
}
