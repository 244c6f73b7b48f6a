import type { JsonSchema } from "./json-schema.ts";
import {
  asSchema,
  chooseBranch,
  isNullable,
  numberOf,
  propertiesOf,
  requiredOf,
  schemaType,
} from "./json-schema.ts";
import { longText } from "./long-text.ts";
import { numberBounds, safeRegExp, validValue } from "./valid-value.ts";

/**
 * One boundary or invalid value for a position. `invalid`: the schema forbids it, so a 2xx means the
 * server did not validate. `valid`: the schema allows it (an edge), so only a 5xx is a defect.
 */
export interface EdgeCase {
  label: string;
  value: unknown;
  expectation: "invalid" | "valid";
}

export const UNICODE_SAMPLE = "Zoë ✓ 日本語 🚀 \u202eRTL";
export const SPECIAL_CHARACTERS = `it's "quoted" <b>&amp; ;--`;

/** Edge and invalid values for one JSON position (a body property); `text` restricts to URL text forms. */
export function edgeCases(
  schema: JsonSchema,
  context: { seed: string; name?: string; text?: boolean },
): EdgeCase[] {
  const chosen = chooseBranch(schema);
  const type = schemaType(chosen);
  const cases: EdgeCase[] = [];
  const add = (label: string, value: unknown, expectation: EdgeCase["expectation"]) =>
    cases.push({ label, value, expectation });
  if (!context.text && !isNullable(schema) && type !== "any" && type !== "null") add("null", null, "invalid");
  switch (type) {
    case "string": {
      const minLength = numberOf(chosen.minLength) ?? 0;
      const maxLength = numberOf(chosen.maxLength);
      const constrained =
        Array.isArray(chosen.enum) || typeof chosen.pattern === "string" || typeof chosen.format === "string";
      if (!context.text) add("wrong type (object)", { qaas: true }, "invalid");
      if (minLength >= 1) add("empty string", "", "invalid");
      if (maxLength !== undefined && maxLength < 100_000)
        add(`too long (${maxLength + 1})`, longText(maxLength + 1), "invalid");
      if (Array.isArray(chosen.enum)) add("not in enum", "qaas-not-in-enum", "invalid");
      const badFormat = formatViolation(typeof chosen.format === "string" ? chosen.format : "");
      if (badFormat !== undefined) add(`not a valid ${String(chosen.format)}`, badFormat, "invalid");
      const pattern = typeof chosen.pattern === "string" ? safeRegExp(chosen.pattern) : undefined;
      if (pattern && !pattern.test("!!qaas!!")) add("does not match pattern", "!!qaas!!", "invalid");
      if (!constrained) {
        if (minLength === 0) add("empty string", "", "valid");
        if (maxLength === undefined || maxLength >= UNICODE_SAMPLE.length)
          add("unicode", UNICODE_SAMPLE, "valid");
        if (maxLength === undefined || maxLength >= SPECIAL_CHARACTERS.length)
          add("quotes and markup", SPECIAL_CHARACTERS, "valid");
        if (maxLength === undefined) add("long string (10000)", longText(10_000), "valid");
      }
      break;
    }
    case "integer":
    case "number": {
      const { min, max, integer } = numberBounds(chosen);
      add("wrong type (string)", "not-a-number", "invalid");
      if (min !== undefined) add(`below minimum (${min - 1})`, min - 1, "invalid");
      if (max !== undefined) add(`above maximum (${max + 1})`, max + 1, "invalid");
      if (integer) add("fraction for an integer", 1.5, "invalid");
      if (min === undefined) add("negative", -1, "valid");
      if (max === undefined) {
        add("huge number", integer ? 2 ** 53 + 2 : 1e308, "valid");
        if (integer) add("above 32-bit range", 2_147_483_648, "valid");
      }
      if ((min === undefined || min <= 0) && (max === undefined || max >= 0)) add("zero", 0, "valid");
      break;
    }
    case "boolean":
      add("wrong type (string)", "qaas-not-boolean", "invalid");
      break;
    case "array": {
      const minItems = numberOf(chosen.minItems) ?? 0;
      const maxItems = numberOf(chosen.maxItems);
      if (!context.text) add("wrong type (string)", "not-an-array", "invalid");
      if (minItems >= 1) add("empty array", [], "invalid");
      else add("empty array", [], "valid");
      if (maxItems !== undefined && maxItems < 1000) {
        const item = validValue(asSchema(chosen.items), { seed: context.seed });
        add(
          `too many items (${maxItems + 1})`,
          Array.from({ length: maxItems + 1 }, () => item),
          "invalid",
        );
      }
      break;
    }
    case "object": {
      if (!context.text) add("wrong type (string)", "not-an-object", "invalid");
      break;
    }
    default:
      break;
  }
  return cases;
}

function formatViolation(format: string): string | undefined {
  switch (format.toLowerCase()) {
    case "email":
      return "not-an-email";
    case "uuid":
      return "not-a-uuid";
    case "date-time":
      return "not-a-date-time";
    case "date":
      return "2024-13-45";
    case "uri":
    case "url":
      return "not a uri";
    case "ipv4":
      return "999.1.1.1";
    default:
      return undefined;
  }
}

/** A body edge case: the valid body with one property replaced (or left out). */
export interface BodyMutation {
  label: string;
  /** The property path changed, e.g. `quantity` or `address.zip`; empty for whole-body cases. */
  field: string;
  body: unknown;
  /** Set for bodies that are not JSON at all (a malformed document). */
  raw?: string;
  expectation: EdgeCase["expectation"];
}

/** Every single-property mutation of a valid body, plus whole-body cases, one nesting level deep. */
export function bodyMutations(
  schema: JsonSchema,
  validBody: unknown,
  seed: string,
  options: { form?: boolean } = {},
): BodyMutation[] {
  // Every value of a form-encoded body is text: a null, an object or an array cannot be sent as one (it
  // arrives as some string a handler may rightly take), nor can malformed JSON.
  const text = options.form === true;
  // An object body without a single known field (a body the map only guesses is read, as when a hook of
  // the framework parses every request) gives no sign the handler needs it: ignoring a broken or
  // misshapen one is fine.
  const fieldless =
    schemaType(chooseBranch(schema)) === "object" && Object.keys(propertiesOf(schema)).length === 0;
  if (fieldless) return [];
  const mutations: BodyMutation[] = text
    ? []
    : [{ label: "malformed JSON", field: "", body: undefined, raw: '{"qaas": ', expectation: "invalid" }];
  if (schemaType(chooseBranch(schema)) !== "object" || !validBody || typeof validBody !== "object")
    return mutations;
  const base = validBody as Record<string, unknown>;
  const required = requiredOf(schema);
  if (required.length > 0)
    mutations.push({ label: "empty object", field: "", body: {}, expectation: "invalid" });
  if (!text)
    mutations.push({ label: "array instead of object", field: "", body: [], expectation: "invalid" });
  for (const [name, property] of Object.entries(propertiesOf(schema))) {
    if (required.includes(name)) {
      const { [name]: _removed, ...rest } = base;
      mutations.push({ label: "missing required property", field: name, body: rest, expectation: "invalid" });
    }
    for (const edge of edgeCases(property, { seed, name, text })) {
      mutations.push({
        label: edge.label,
        field: name,
        body: { ...base, [name]: edge.value },
        expectation: edge.expectation,
      });
    }
    const inner = chooseBranch(property);
    const innerBase = base[name];
    if (
      schemaType(inner) === "object" &&
      innerBase &&
      typeof innerBase === "object" &&
      !Array.isArray(innerBase)
    ) {
      const innerRequired = requiredOf(inner);
      for (const [innerName, innerProperty] of Object.entries(propertiesOf(inner))) {
        const field = `${name}.${innerName}`;
        if (innerRequired.includes(innerName)) {
          const { [innerName]: _removed, ...rest } = innerBase as Record<string, unknown>;
          mutations.push({
            label: "missing required property",
            field,
            body: { ...base, [name]: rest },
            expectation: "invalid",
          });
        }
        for (const edge of edgeCases(innerProperty, { seed, name: innerName, text })) {
          mutations.push({
            label: edge.label,
            field,
            body: { ...base, [name]: { ...(innerBase as Record<string, unknown>), [innerName]: edge.value } },
            expectation: edge.expectation,
          });
        }
      }
    }
  }
  return mutations;
}
