import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { schemaArbitrary } from "../../src/probes/schema-values/arbitrary.ts";
import { bodyMutations, edgeCases } from "../../src/probes/schema-values/edge-cases.ts";
import type { JsonSchema } from "../../src/probes/schema-values/json-schema.ts";
import { acyclicSchema, forDirection } from "../../src/probes/schema-values/json-schema.ts";
import { findMinimalFailure, minimizeObject } from "../../src/probes/schema-values/shrink.ts";
import { validValue } from "../../src/probes/schema-values/valid-value.ts";

const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const addFormats = addFormatsModule.default ?? addFormatsModule;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const valid = (schema: JsonSchema, value: unknown) => ajv.validate(schema, value) as boolean;

const SCHEMAS: Record<string, JsonSchema> = {
  bounded: { type: "integer", minimum: 1, maximum: 5 },
  exclusive: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 10 },
  text: { type: "string", minLength: 3, maxLength: 8 },
  email: { type: "string", format: "email" },
  uuid: { type: "string", format: "uuid" },
  dateTime: { type: "string", format: "date-time" },
  pattern: { type: "string", pattern: "^[a-z0-9-]+$", maxLength: 30 },
  enumerated: { type: "string", enum: ["draft", "published"] },
  list: { type: "array", items: { type: "integer", minimum: 0 }, minItems: 1, maxItems: 3 },
  nullable: { type: ["string", "null"], maxLength: 4 },
  object: {
    type: "object",
    required: ["name", "quantity", "address"],
    properties: {
      name: { type: "string", minLength: 1, maxLength: 40 },
      quantity: { type: "integer", minimum: 1 },
      address: {
        type: "object",
        required: ["zip"],
        properties: { zip: { type: "string", pattern: "^\\d{5}$" }, city: { type: "string" } },
      },
      role: { type: "string", enum: ["user", "admin"] },
    },
  },
  composed: {
    allOf: [
      { type: "object", required: ["a"], properties: { a: { type: "string" } } },
      { required: ["b"], properties: { b: { type: "boolean" } } },
    ],
  },
  choice: {
    oneOf: [{ type: "null" }, { type: "object", required: ["id"], properties: { id: { type: "integer" } } }],
  },
};

describe("value generation from JSON schemas", () => {
  it("gives a date-named text field without a format a date, and a time-named one an instant", () => {
    const text = { type: "string" };
    for (const name of ["starts_on", "endDate", "due_date", "birthday"])
      expect(validValue(text, { seed: "s", name })).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(validValue(text, { seed: "s", name: "opens_at" })).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(validValue(text, { seed: "s", name: "title" })).not.toMatch(/^\d{4}-/);
  });

  it("ends a span after its start, at a time the seed draws, so records made in turn do not overlap", () => {
    const stay = {
      type: "object",
      properties: {
        starts_on: { type: "string", format: "date" },
        ends_on: { type: "string", format: "date" },
        checkIn: { type: "string", format: "date-time" },
        checkOut: { type: "string", format: "date-time" },
      },
    } as JsonSchema;
    const first = validValue(stay, { seed: "a1" }) as Record<string, string>;
    const second = validValue(stay, { seed: "b7" }) as Record<string, string>;
    for (const value of [first, second]) {
      expect(Date.parse(value.ends_on!) - Date.parse(value.starts_on!)).toBe(3 * 86_400_000);
      expect(Date.parse(value.checkOut!) - Date.parse(value.checkIn!)).toBe(3 * 86_400_000);
      expect(value.starts_on).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    expect(first.ends_on! < second.starts_on! || second.ends_on! < first.starts_on!).toBe(true);
  });

  it("builds a valid value for every schema shape", () => {
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      const value = validValue(schema, { seed: "k3x9" });
      expect(valid(schema, value), `${name}: ${JSON.stringify(value)} ${ajv.errorsText()}`).toBe(true);
    }
  });

  it("leaves optional privileged fields (role) out of a valid body and uses the seed for unique strings", () => {
    expect(validValue(SCHEMAS.object!, { seed: "k3x9", includeOptional: true })).toEqual({
      name: "qaas-k3x9",
      quantity: 1,
      address: { zip: "77777" },
    });
    expect(validValue({ type: "string", format: "email" }, { seed: "k3x9" })).toBe("qaas-k3x9@example.test");
  });

  it("labels edge cases truthfully: every invalid case breaks the schema, every valid edge satisfies it", () => {
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      for (const edge of edgeCases(schema, { seed: "k3x9" })) {
        expect(valid(schema, edge.value), `${name} / ${edge.label} should be ${edge.expectation}`).toBe(
          edge.expectation === "valid",
        );
      }
    }
  });

  it("mutates one property of a valid body at a time, one nesting level deep", () => {
    const schema = SCHEMAS.object!;
    const body = validValue(schema, { seed: "k3x9" });
    const mutations = bodyMutations(schema, body, "k3x9");
    expect(mutations.find((mutation) => mutation.label === "malformed JSON")?.raw).toBe('{"qaas": ');
    expect(
      mutations.filter((mutation) => mutation.field === "address.zip").map((mutation) => mutation.label),
    ).toEqual(["missing required property", "null", "wrong type (object)", "does not match pattern"]);
    for (const mutation of mutations.filter((entry) => entry.raw === undefined)) {
      expect(valid(schema, mutation.body), `${mutation.field} / ${mutation.label}`).toBe(
        mutation.expectation === "valid",
      );
    }
  });

  it("keeps to what text can carry for a form-encoded body: no null, object, array or malformed JSON", () => {
    const schema = SCHEMAS.object!;
    const body = validValue(schema, { seed: "k3x9" });
    const labels = bodyMutations(schema, body, "k3x9", { form: true }).map((mutation) => mutation.label);
    expect(labels).toContain("does not match pattern");
    expect(labels).toContain("missing required property");
    for (const dropped of ["malformed JSON", "array instead of object", "null", "wrong type (object)"])
      expect(labels).not.toContain(dropped);
  });

  it("sends no malformed document where the body has no known field (nothing says the handler reads it)", () => {
    const fieldless = { type: "object", properties: {} };
    expect(bodyMutations(fieldless, {}, "k3x9").map((mutation) => mutation.label)).toEqual([]);
    const labels = bodyMutations({ type: "array", items: { type: "string" } }, ["a"], "k3x9").map(
      (mutation) => mutation.label,
    );
    expect(labels).toEqual(["malformed JSON"]);
  });

  it("generates only schema-valid values property-based", () => {
    for (const name of ["bounded", "text", "list", "object", "nullable"]) {
      const schema = SCHEMAS[name]!;
      fc.assert(
        fc.property(schemaArbitrary(schema, "k3x9"), (value) => valid(schema, value)),
        { numRuns: 60, seed: 7 },
      );
    }
  });

  it("shrinks a failure to the minimal case", async () => {
    const schema: JsonSchema = {
      type: "object",
      required: ["quantity", "note"],
      properties: {
        quantity: { type: "integer", minimum: 0, maximum: 1_000_000 },
        note: { type: "string", maxLength: 50 },
      },
    };
    // The "server" breaks on any quantity above 1000, whatever the note says.
    const result = await findMinimalFailure(
      schemaArbitrary(schema, "k3x9"),
      async (value) => (value as { quantity: number }).quantity > 1000,
      { runs: 50, maxChecks: 400, seed: 3 },
    );
    expect(result).toBeDefined();
    expect(result!.minimal).toEqual({ quantity: 1001, note: "" });
    expect((result!.original as { quantity: number }).quantity).toBeGreaterThan(1000);
    expect(result!.checks).toBeLessThanOrEqual(400);
  });

  it("stops at its check budget and reports nothing when no value fails", async () => {
    let calls = 0;
    const none = await findMinimalFailure(
      fc.integer(),
      async () => {
        calls += 1;
        return false;
      },
      { runs: 500, maxChecks: 20 },
    );
    expect(none).toBeUndefined();
    expect(calls).toBe(20);
  });

  it("drops keys that do not matter for a failure", async () => {
    const { minimal } = await minimizeObject(
      { a: 1, b: 2, sku: "é" },
      new Set(["sku"]),
      async (candidate) => typeof candidate.sku === "string",
      10,
    );
    expect(minimal).toEqual({ sku: "é" });
  });

  it("cuts cycles and hides readOnly fields from requests and writeOnly fields from responses", () => {
    const node: JsonSchema = {
      type: "object",
      properties: { id: { type: "integer", readOnly: true }, password: { type: "string", writeOnly: true } },
      required: ["id", "password"],
    };
    (node.properties as Record<string, unknown>).self = node;
    const copy = acyclicSchema(node);
    expect(JSON.stringify(copy)).toContain('"self":{}');
    expect(forDirection(copy, "request").required).toEqual(["password"]);
    expect(forDirection(copy, "response").required).toEqual(["id"]);
  });
});

describe("long edge values", () => {
  // A run of letters that a pattern rejects only at its end is what makes a backtracking email or URL
  // check take exponential time; a length check must not be that input.
  const EMAILISH = /^([a-zA-Z0-9]+[._-]?)*[a-zA-Z0-9]+@[a-z]+\.[a-z]{2,}$/;

  it("are as long as asked, with no run of letters longer than two for a backtracking pattern to split", () => {
    const cases = [
      ...edgeCases({ type: "string", maxLength: 120 }, { seed: "s" }),
      ...edgeCases({ type: "string" }, { seed: "s" }),
    ].filter((entry) => typeof entry.value === "string" && entry.value.length > 100);
    expect(cases.map((entry) => [entry.label, (entry.value as string).length])).toEqual([
      ["too long (121)", 121],
      ["long string (10000)", 10_000],
    ]);
    for (const entry of cases) {
      const value = entry.value as string;
      expect(Math.max(...value.split(/[^a-zA-Z0-9]/).map((run) => run.length))).toBeLessThanOrEqual(2);
      expect(value.trim()).toBe(value);
      // Refused at its first separator: returns at once (a run of 121 letters would not return at all).
      expect(EMAILISH.test(value)).toBe(false);
    }
  });
});
