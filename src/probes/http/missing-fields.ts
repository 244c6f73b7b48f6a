import { asSchema } from "../schema-values/json-schema.ts";
import { validValue } from "../schema-values/valid-value.ts";
import type { HttpExchange } from "./http-types.ts";

// The fields an answer says the request lacked. A handler that checks its inputs one after another stops
// at the first one missing, so a probe aimed at a later field never reaches it: "Missing parameter
// 'price'", "email is required", JSON Schema's "'name' is a required property", a framework's list of
// field errors. Names are read only from client-error answers, and only ones the request did not send.

const PATTERNS = [
  // Missing parameter 'price' / missing required field: name / missing property "name"
  /\bmissing\s+(?:required\s+)?(?:parameter|param|field|property|argument|key|value)s?\b\s*[:=]?\s*['"`]?([A-Za-z_][\w.-]{0,63})/gi,
  // 'name' is a required property / "email" is required / price is mandatory
  /['"`]?([A-Za-z_][\w.-]{0,63})['"`]?\s+(?:is|are)\s+(?:a\s+)?(?:required|missing|mandatory)\b/gi,
  // required parameter 'price' / required field "name"
  /\brequired\s+(?:parameter|param|field|property|argument|key)\s+['"`]([A-Za-z_][\w.-]{0,63})['"`]/gi,
];

/** Words the patterns would take for a name in prose ("this field is required", "value is missing"). */
const NOT_NAMES = new Set([
  "this",
  "field",
  "value",
  "parameter",
  "param",
  "property",
  "argument",
  "it",
  "body",
  "input",
  "data",
  "request",
  "which",
  "that",
  "one",
  "something",
  "path",
]);

/** Validation errors as frameworks list them: `{ loc: ["body", "price"], msg: "field required" }` and kin. */
function listedFieldErrors(json: unknown, found: Set<string>): void {
  const visit = (value: unknown, depth: number): void => {
    if (depth > 6 || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    const record = value as Record<string, unknown>;
    const message = [record.msg, record.message, record.type, record.code]
      .filter((part) => typeof part === "string")
      .join(" ");
    if (/\b(required|missing)\b/i.test(message)) {
      const where = record.loc ?? record.path ?? record.field ?? record.param ?? record.property;
      const name = Array.isArray(where) ? where.at(-1) : where;
      if (typeof name === "string" && /^[A-Za-z_][\w.-]{0,63}$/.test(name)) found.add(name);
    }
    for (const child of Object.values(record)) visit(child, depth + 1);
  };
  visit(json, 0);
}

/** Field names a client-error answer says are missing, apart from those in `sent`. */
export function missingFieldsNamed(exchange: HttpExchange | undefined, sent: Iterable<string>): string[] {
  const response = exchange?.response;
  if (!response || response.status < 400 || response.status >= 500) return [];
  const found = new Set<string>();
  for (const pattern of PATTERNS) {
    for (const match of response.body.slice(0, 4000).matchAll(pattern)) {
      const name = match[1]!;
      if (!NOT_NAMES.has(name.toLowerCase())) found.add(name);
    }
  }
  listedFieldErrors(response.json, found);
  const already = new Set([...sent].map((name) => name.toLowerCase()));
  return [...found].filter((name) => !already.has(name.toLowerCase()));
}

/** A plausible value for a field known only by the name an answer gave it (an email for `mail`, and so on). */
export function namedFieldValue(name: string, seed: string): string {
  return String(validValue(asSchema({ type: "string" }), { seed, name }));
}
