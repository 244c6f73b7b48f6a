import type { JsonSchema } from "../schema-values/json-schema.ts";
import { asSchema, flattenSchema } from "../schema-values/json-schema.ts";
import { snakeKey } from "./exposure-secrets.ts";
import { isMaskedValue } from "./exposure-walk.ts";

// Excessive data exposure (OWASP API3): an answer carries private fields about people that its contract
// does not promise. With a documented response schema the test is exact: a field the schema does not
// declare, named like private data, holding a value of that kind. Without one only the most sensitive
// categories count, and only in lists of other people's records.

export type PrivateCategory =
  | "birth date"
  | "government id"
  | "financial data"
  | "home address"
  | "health data"
  | "internal notes"
  | "contact details"
  | "privilege flags"
  | "network address";

interface PrivateField {
  category: PrivateCategory;
  pattern: RegExp;
  /** Sensitive enough to report without a documented schema to compare with. */
  high: boolean;
  plausible: (value: unknown) => boolean;
}

const nonEmptyText = (value: unknown) =>
  typeof value === "string" && value.trim().length > 0 && !isMaskedValue(value);
const dateLike = (value: unknown) =>
  typeof value === "string" && /^\d{4}-\d{2}-\d{2}|^\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}$/.test(value.trim());
const digits = (minimum: number) => (value: unknown) =>
  (typeof value === "number" && value > 0) ||
  (typeof value === "string" && (value.match(/\d/g)?.length ?? 0) >= minimum && !isMaskedValue(value));
const flag = (value: unknown) =>
  typeof value === "boolean" || (typeof value === "string" && value.trim() !== "") || Array.isArray(value);

const PRIVATE_FIELDS: readonly PrivateField[] = [
  {
    category: "birth date",
    pattern: /^(?:date_of_birth|dob|birth_?date|birthday|born_on|birth_day)$/,
    high: true,
    plausible: dateLike,
  },
  {
    category: "government id",
    pattern:
      /(?:^|_)(?:ssn|social_security(?:_number)?|national_(?:id|insurance)(?:_number)?|tax_?id|taxpayer_id|tin|passport(?:_number|_no)?|drivers?_licen[cs]e(?:_number|_no)?|id_card(?:_number)?|personal_id_number|sin)$/,
    high: true,
    plausible: nonEmptyText,
  },
  {
    category: "financial data",
    pattern:
      /(?:^|_)(?:salary|wage|wages|income|compensation|pay_rate|hourly_rate|bank_account(?:_number)?|account_number|iban|routing_number|card_number|credit_card(?:_number)?|cc_number|cvv|cvc|bonus)$/,
    high: true,
    plausible: digits(2),
  },
  {
    category: "home address",
    pattern:
      /^(?:home|personal|residential|private|street)_?address(?:_line_?\d)?$|^(?:home_street|residence)$/,
    high: true,
    plausible: nonEmptyText,
  },
  {
    category: "health data",
    pattern:
      /(?:^|_)(?:medical_\w+|diagnosis|diagnoses|health_\w+|allergies|medications?|disabilit(?:y|ies)|blood_type|conditions)$/,
    high: true,
    plausible: nonEmptyText,
  },
  {
    category: "internal notes",
    pattern:
      /^(?:internal|private|confidential|admin|hr|staff|manager)_(?:notes?|comments?|remarks?|memo)$|^performance_(?:notes?|review|rating)$/,
    high: true,
    plausible: nonEmptyText,
  },
  {
    category: "contact details",
    pattern:
      /^(?:e_?mail|email_address|personal_email|phone|phone_number|mobile|mobile_phone|telephone|tel|address|street|postal_address)$/,
    high: false,
    plausible: (value) => nonEmptyText(value) && digits(1)(value) !== false,
  },
  {
    category: "privilege flags",
    pattern:
      /^(?:is_admin|is_superuser|is_staff|admin|superuser|role|roles|permissions|privileges|scopes|is_internal)$/,
    high: false,
    plausible: flag,
  },
  {
    category: "network address",
    pattern: /^(?:last_login_ip|ip_address|last_ip|signup_ip|registration_ip)$/,
    high: false,
    plausible: nonEmptyText,
  },
];

/** The private category a field name belongs to, when it holds a value of that kind. */
export function privateCategoryOf(
  key: string,
  value: unknown,
): { category: PrivateCategory; high: boolean } | undefined {
  const snake = snakeKey(key);
  const field = PRIVATE_FIELDS.find((entry) => entry.pattern.test(snake));
  if (!field || value === null || value === undefined) return undefined;
  // Contact details are private only when they are there at all: an email needs an @, a phone digits.
  if (field.category === "contact details") {
    const text = typeof value === "string" ? value : "";
    if (/mail/.test(snake) ? !/@/.test(text) : (text.match(/\d/g)?.length ?? 0) < 3) return undefined;
  } else if (!field.plausible(value)) return undefined;
  return { category: field.category, high: field.high };
}

export interface ExcessField {
  path: string;
  key: string;
  value: unknown;
  category: PrivateCategory;
  high: boolean;
  /** The object that holds it and whether that object is an element of a list. */
  record: Record<string, unknown>;
  inList: boolean;
  /** Whether the documented schema declares the field (false: it was checked and is absent). */
  declared: boolean | undefined;
}

/**
 * Every property any branch of a schema declares; `open` when the schema admits fields it does not name
 * (no properties at all, or `additionalProperties` set), so an unnamed field there is not undeclared.
 */
function declaredProperties(schema: JsonSchema): { properties: Record<string, JsonSchema>; open: boolean } {
  const flat = flattenSchema(schema);
  const alternatives = ["oneOf", "anyOf"].flatMap((key) =>
    Array.isArray(flat[key]) ? (flat[key] as unknown[]).map((part) => flattenSchema(asSchema(part))) : [],
  );
  const properties: Record<string, JsonSchema> = {};
  let open = false;
  for (const branch of [flat, ...alternatives]) {
    for (const [name, value] of Object.entries(asSchema(branch.properties)))
      properties[name] = asSchema(value);
    const additional = branch.additionalProperties;
    if (additional === true || (additional && typeof additional === "object")) open = true;
  }
  return { properties, open: open || Object.keys(properties).length === 0 };
}

function itemsOf(schema: JsonSchema): JsonSchema | undefined {
  const flat = flattenSchema(schema);
  if (flat.items && typeof flat.items === "object") return asSchema(flat.items);
  for (const key of ["oneOf", "anyOf"]) {
    const options = flat[key];
    if (Array.isArray(options))
      for (const option of options) {
        const items = asSchema(option).items;
        if (items && typeof items === "object") return asSchema(items);
      }
  }
  return undefined;
}

/**
 * Private fields in an answer. With `schema`, each field is checked against it (`declared`); fields under a
 * free-form part of the schema are not judged. Without one every private field is listed (`declared`
 * undefined) and the caller decides.
 */
export function privateFieldsIn(json: unknown, schema: JsonSchema | undefined): ExcessField[] {
  const found: ExcessField[] = [];
  /** `node`: the schema of `value` (undefined: none known); `undeclared`: an ancestor is not in the schema. */
  const visit = (
    value: unknown,
    node: JsonSchema | undefined,
    undeclared: boolean,
    path: string,
    inList: boolean,
    depth: number,
  ): void => {
    if (depth > 10 || value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      const items = node ? itemsOf(node) : undefined;
      for (const [index, item] of value.slice(0, 200).entries())
        visit(item, items, undeclared, `${path}[${index}]`, true, depth + 1);
      return;
    }
    const record = value as Record<string, unknown>;
    const shape = node ? declaredProperties(node) : undefined;
    for (const [key, child] of Object.entries(record)) {
      const childPath = path ? `${path}.${key}` : key;
      const declared = undeclared
        ? false
        : shape === undefined || (shape.open && !(key in shape.properties))
          ? undefined
          : key in shape.properties;
      const category = privateCategoryOf(key, child);
      if (category) found.push({ path: childPath, key, value: child, ...category, record, inList, declared });
      visit(child, shape?.properties[key], declared === false, childPath, false, depth + 1);
    }
  };
  visit(json, schema, false, "", false, 0);
  return found;
}

/** JSON paths of every field (private or not) that a documented schema leaves out. */
export function undeclaredPaths(json: unknown, schema: JsonSchema): string[] {
  const paths: string[] = [];
  const check = (value: unknown, node: JsonSchema | undefined, path: string, depth: number): void => {
    if (depth > 10 || !value || typeof value !== "object" || !node) return;
    if (Array.isArray(value)) {
      const items = itemsOf(node);
      for (const [index, item] of value.slice(0, 200).entries())
        check(item, items, `${path}[${index}]`, depth + 1);
      return;
    }
    const shape = declaredProperties(node);
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      const childPath = path ? `${path}.${key}` : key;
      if (key in shape.properties) check(child, shape.properties[key], childPath, depth + 1);
      else if (!shape.open) paths.push(childPath);
    }
  };
  check(json, schema, "", 0);
  return paths;
}
