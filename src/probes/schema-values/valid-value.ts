import { snakeCase, upperBoundOf } from "../data/naming.ts";
import type { JsonSchema } from "./json-schema.ts";
import { asSchema, chooseBranch, numberOf, propertiesOf, requiredOf, schemaType } from "./json-schema.ts";
import { stringForPattern } from "./pattern-value.ts";

export interface ValueOptions {
  /** Makes generated strings unique (emails, names), so two creations do not collide on a unique column. */
  seed: string;
  /** The property or parameter name, for hints such as `email` or `url` when the schema has no format. */
  name?: string;
  /** Also fill optional properties (never the sensitive ones below). */
  includeOptional?: boolean;
}

/**
 * Optional properties a valid request leaves alone: setting them could grant a role, move a resource to
 * another owner or fake server-side state, which is a probe of its own (mass assignment), not a default.
 */
export const PRIVILEGED_PROPERTY =
  /^(id|_id|uuid|roles?|is_?admin|admin|is_?staff|is_?superuser|permissions?|scopes?|owner(_?id)?|user_?id|tenant(_?id)?|account_?id|org(anization)?_?id|verified|is_?verified|email_?verified|balance|credits?|status|state|created_?(at|by)|updated_?(at|by)|deleted(_?at)?|password_?hash|hash|salt)$/i;

/**
 * Text carrying a value the run generated (`qaas-3f9a1`, `Qaas 3f9a1`, `qaas3f9a1c2e`): a record the run
 * made itself, which another of its probes may change or delete at any moment.
 */
export function carriesRunMarker(text: string): boolean {
  return /\bqaas[-_ ]?[0-9a-z]{4,}/i.test(text);
}

const UNIQUE_HINT = /(name|title|slug|code|sku|handle|key|label|username|login)$/i;

/** A deterministic value that satisfies `schema` (as far as a schema can say). */
export function validValue(schema: JsonSchema, options: ValueOptions): unknown {
  const chosen = chooseBranch(schema);
  if (chosen.const !== undefined) return chosen.const;
  if (Array.isArray(chosen.enum)) {
    const value = chosen.enum.find((entry) => entry !== null);
    if (value !== undefined) return value;
  }
  const type = schemaType(chosen);
  const example = exampleOf(chosen);
  switch (type) {
    case "string":
      return validString(chosen, options, example);
    case "integer":
    case "number":
      return validNumber(chosen, type, example);
    case "boolean":
      return typeof chosen.default === "boolean"
        ? chosen.default
        : typeof example === "boolean"
          ? example
          : false;
    case "array":
      return validArray(chosen, options, example);
    case "object":
      return validObject(chosen, options, example);
    case "null":
      return null;
    default:
      return example !== undefined ? example : `qaas-${options.seed}`;
  }
}

export function exampleOf(schema: JsonSchema): unknown {
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  return schema.default;
}

function validString(schema: JsonSchema, options: ValueOptions, example: unknown): string {
  const minLength = numberOf(schema.minLength) ?? 0;
  const maxLength = numberOf(schema.maxLength) ?? Number.POSITIVE_INFINITY;
  const name = options.name ?? "";
  const format = typeof schema.format === "string" ? schema.format.toLowerCase() : "";
  const fitLength = (value: string): string => {
    let result = value;
    while (result.length < minLength) result += "x";
    return result.length > maxLength ? result.slice(0, Math.max(minLength, maxLength)) : result;
  };
  const formatted = formatValue(format, options.seed, name);
  if (formatted !== undefined) return formatted;
  const pattern = typeof schema.pattern === "string" ? safeRegExp(schema.pattern) : undefined;
  const candidates: string[] = [];
  if (typeof example === "string") {
    if (UNIQUE_HINT.test(name) && !pattern) candidates.push(fitLength(`${example}-${options.seed}`));
    candidates.push(example);
  }
  candidates.push(fitLength(`qaas-${options.seed}`), fitLength(`Qaas ${options.seed}`));
  if (pattern) {
    const generated = stringForPattern(String(schema.pattern));
    if (generated !== undefined && generated.length >= minLength && generated.length <= maxLength)
      candidates.push(generated);
    candidates.push(
      "abc",
      "ABC",
      "abc123",
      "A1",
      "a",
      "1",
      "123",
      "2024-01-15",
      "qaas",
      "QAAS-1",
      "a-b",
      "ab_12",
    );
    const match = candidates.find((candidate) => pattern.test(candidate));
    if (match !== undefined) return match;
  }
  return candidates[0]!;
}

function formatValue(format: string, seed: string, name: string): string | undefined {
  switch (format) {
    case "email":
    case "idn-email":
      return `qaas-${seed}@example.test`;
    case "uuid":
      return uuidFromSeed(seed);
    case "date-time":
      return "2024-01-15T10:00:00Z";
    case "date":
      return "2024-01-15";
    case "time":
      return "10:00:00Z";
    case "uri":
    case "url":
    case "iri":
    case "uri-reference":
      return `https://example.test/qaas-${seed}`;
    case "hostname":
    case "idn-hostname":
      return "example.test";
    case "ipv4":
      return "192.0.2.10";
    case "ipv6":
      return "2001:db8::10";
    case "password":
      return `Qaas-${seed}-Pw1!`;
    case "byte":
      return Buffer.from(`qaas-${seed}`).toString("base64");
    default:
      break;
  }
  if (!format) {
    if (/e-?mail$/i.test(name)) return `qaas-${seed}@example.test`;
    if (/(^|_)(url|uri|website|homepage|link)$/i.test(name)) return `https://example.test/qaas-${seed}`;
    if (/phone/i.test(name)) return "+15555550100";
    // A schema read from code has no formats; a handler parsing `starts_on` as a date refuses any other text.
    if (/(^|_)(date|day|dob)$|_on$|^date_|birth_?date|birthday/i.test(snakeCase(name))) return "2024-01-15";
    if (/_at$|(^|_)(datetime|timestamp)$/i.test(snakeCase(name))) return "2024-01-15T10:00:00Z";
  }
  return undefined;
}

export function safeRegExp(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, "u");
  } catch {
    try {
      return new RegExp(pattern);
    } catch {
      return undefined;
    }
  }
}

function uuidFromSeed(seed: string): string {
  const hex = Buffer.from(seed.padEnd(16, "0"))
    .toString("hex")
    .replace(/[^0-9a-f]/g, "0")
    .padEnd(32, "0")
    .slice(0, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The lowest allowed value at or above 1 (a quantity or a page size), honouring both bound styles. */
export function numberBounds(schema: JsonSchema): {
  min: number | undefined;
  max: number | undefined;
  integer: boolean;
} {
  const integer = schemaType(schema) === "integer";
  const step = integer ? 1 : 0.01;
  let min = numberOf(schema.minimum);
  let max = numberOf(schema.maximum);
  if (typeof schema.exclusiveMinimum === "number") min = schema.exclusiveMinimum + step;
  else if (schema.exclusiveMinimum === true && min !== undefined) min += step;
  if (typeof schema.exclusiveMaximum === "number") max = schema.exclusiveMaximum - step;
  else if (schema.exclusiveMaximum === true && max !== undefined) max -= step;
  return { min, max, integer };
}

function validNumber(schema: JsonSchema, type: "integer" | "number", example: unknown): number {
  const { min, max } = numberBounds(schema);
  const fits = (value: number) =>
    (min === undefined || value >= min) &&
    (max === undefined || value <= max) &&
    (type === "number" || Number.isInteger(value));
  if (typeof example === "number" && fits(example)) return example;
  let value =
    min !== undefined ? Math.max(min, Math.min(1, max ?? 1)) : max !== undefined && max < 1 ? max : 1;
  if (min !== undefined && value < min) value = min;
  const multipleOf = numberOf(schema.multipleOf);
  if (multipleOf && multipleOf > 0) value = Math.ceil(value / multipleOf) * multipleOf;
  return type === "integer" ? Math.ceil(value) : value;
}

function validArray(schema: JsonSchema, options: ValueOptions, example: unknown): unknown[] {
  if (Array.isArray(example) && example.length > 0) return example;
  const minItems = numberOf(schema.minItems) ?? 0;
  const maxItems = numberOf(schema.maxItems) ?? Number.POSITIVE_INFINITY;
  const count = Math.min(Math.max(minItems, 1), maxItems);
  const items = asSchema(schema.items);
  return Array.from({ length: count }, (_, index) =>
    validValue(items, {
      ...options,
      seed: count > 1 ? `${options.seed}${index}` : options.seed,
      includeOptional: false,
    }),
  );
}

function validObject(schema: JsonSchema, options: ValueOptions, example: unknown): Record<string, unknown> {
  const properties = propertiesOf(schema);
  const required = requiredOf(schema);
  const names = Object.keys(properties);
  if (names.length === 0 && example && typeof example === "object" && !Array.isArray(example)) {
    return { ...(example as Record<string, unknown>) };
  }
  const chosen = names.filter(
    (name) =>
      required.includes(name) ||
      ((options.includeOptional || required.length === 0) && !PRIVILEGED_PROPERTY.test(name)),
  );
  const result: Record<string, unknown> = {};
  for (const name of chosen) {
    result[name] = validValue(properties[name]!, { seed: options.seed, name, includeOptional: false });
  }
  // A span (`starts_on`/`ends_on`): its end after its start, which many rules demand, and its place in time
  // drawn from the seed, so that records made one after another do not overlap (a room booked twice).
  for (const name of chosen) {
    const upper = upperBoundOf(name, chosen);
    if (upper === undefined || typeof result[upper] !== "string") continue;
    const start = daysLater(result[name], seedDays(options.seed));
    const end = daysLater(start, 3);
    if (start === undefined || end === undefined) continue;
    result[name] = start;
    result[upper] = end;
  }
  return result;
}

/** 0–3999 days, from the seed: spans of different seeds rarely meet. */
function seedDays(seed: string): number {
  let hash = 0;
  for (const character of seed) hash = (hash * 31 + character.charCodeAt(0)) >>> 0;
  return (hash % 1000) * 4;
}

/** A date or date-time `days` later, in the same form; undefined for anything else. */
function daysLater(value: unknown, days: number): string | undefined {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}(T|$)/.test(value)) return undefined;
  const time = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(time)) return undefined;
  const shifted = new Date(time + days * 86_400_000).toISOString();
  return value.length === 10 ? shifted.slice(0, 10) : shifted.replace(".000Z", "Z");
}
