import fc from "fast-check";
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
import { numberBounds, PRIVILEGED_PROPERTY, validValue } from "./valid-value.ts";

const MAX_DEPTH = 4;

/**
 * A fast-check arbitrary of values the schema ALLOWS (property-based hunting for 5xx: any of them must be
 * handled). Strings mix printable unicode, quotes and markup with the schema's bounds; numbers go to the
 * edges of their range. Shrinking moves toward short strings, small numbers and fewer optional keys.
 */
export function schemaArbitrary(
  schema: JsonSchema,
  seed: string,
  depth = 0,
  name?: string,
): fc.Arbitrary<unknown> {
  const chosen = chooseBranch(schema);
  const nullable = isNullable(schema);
  const base = baseArbitrary(chosen, seed, depth, name);
  return nullable ? fc.oneof(base, fc.constant(null)) : base;
}

function baseArbitrary(
  schema: JsonSchema,
  seed: string,
  depth: number,
  name: string | undefined,
): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const fixed = validValue(schema, { seed, name });
  switch (schemaType(schema)) {
    case "string": {
      if (typeof schema.format === "string" || typeof schema.pattern === "string") return fc.constant(fixed);
      const minLength = numberOf(schema.minLength) ?? 0;
      const maxLength = Math.min(numberOf(schema.maxLength) ?? 200, 2000);
      return fc.oneof(
        // Single-code-point graphemes: JSON Schema counts lengths in code points.
        { arbitrary: fc.string({ minLength, maxLength, unit: "grapheme-composite" }), weight: 3 },
        { arbitrary: fc.string({ minLength, maxLength, unit: "grapheme-ascii" }), weight: 3 },
        {
          arbitrary: fc
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe string, sent as data.
            .constantFrom(`'`, `"`, "<b>", "\\", "%", "%00", "${7*7}", "{{7*7}}")
            .map((text) => pad(text, minLength, maxLength)),
          weight: 1,
        },
      );
    }
    case "integer": {
      const { min, max } = numberBounds(schema);
      return fc.integer({
        min: Math.max(min ?? -2_147_483_648, Number.MIN_SAFE_INTEGER),
        max: Math.min(max ?? 2_147_483_647, Number.MAX_SAFE_INTEGER),
      });
    }
    case "number": {
      const { min, max } = numberBounds(schema);
      return fc.double({ min: min ?? -1e12, max: max ?? 1e12, noNaN: true, noDefaultInfinity: true });
    }
    case "boolean":
      return fc.boolean();
    case "array": {
      if (depth >= MAX_DEPTH) return fc.constant(fixed);
      const minLength = numberOf(schema.minItems) ?? 0;
      const maxLength = Math.min(numberOf(schema.maxItems) ?? 5, 5);
      return fc.array(schemaArbitrary(asSchema(schema.items), seed, depth + 1), {
        minLength,
        maxLength: Math.max(minLength, maxLength),
      });
    }
    case "object": {
      if (depth >= MAX_DEPTH) return fc.constant(fixed);
      const properties = propertiesOf(schema);
      const required = requiredOf(schema);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, property] of Object.entries(properties)) {
        if (!required.includes(key) && PRIVILEGED_PROPERTY.test(key)) continue;
        model[key] = schemaArbitrary(property, seed, depth + 1, key);
      }
      return fc.record(model, { requiredKeys: required.filter((key) => key in model) });
    }
    default:
      return fc.constant(fixed);
  }
}

function pad(text: string, minLength: number, maxLength: number): string {
  let result = text;
  while (result.length < minLength) result += "q";
  return result.slice(0, Math.max(maxLength, minLength));
}
