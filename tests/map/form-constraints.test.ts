import { describe, expect, it } from "vitest";
import { withFormConstraints } from "../../src/map/form-constraints.ts";
import type { Operation, Page } from "../../src/map/system-map.ts";

const body = (properties: Record<string, unknown>) => ({
  content_type: "application/json",
  required: true,
  schema: { type: "object", properties },
});

const create: Operation = {
  method: "POST",
  path: "/api/boards/{id}/cards",
  security: "unknown",
  parameters: [],
  responses: {},
  seen_in: ["source"],
  documented: false,
  request_body: body({
    title: { type: "string" },
    kind: { type: "string" },
    state: { type: "string", enum: ["open", "closed"] },
    points: { type: "number" },
    owner_id: { type: "integer" },
  }),
};

const page = (path: string, inputs: Array<Record<string, unknown>>): Page => ({
  path,
  links: [],
  forms: [
    {
      action: path,
      method: "GET",
      fields: inputs.map((input) => String(input.name)),
      inputs: inputs as never,
      scripted: true,
    },
  ],
});

const cardForm = page("/boards/7/cards/new", [
  { name: "title", type: "text", required: true },
  { name: "kind", type: "select", required: false, options: ["bug", "chore", "story"] },
  { name: "state", type: "select", required: false, options: ["open", "closed", "archived"] },
  { name: "points", type: "number", required: false, min: "0", max: "40" },
  { name: "owner_id", type: "select", required: false, options: ["", "1", "2"] },
  { name: "csrf", type: "hidden", required: false, value: "t" },
]);

function properties(operation: Operation): Record<string, Record<string, unknown>> {
  const schema = operation.request_body!.schema as { properties: Record<string, Record<string, unknown>> };
  return schema.properties;
}

describe("constraints a form states join the body of the operation it feeds", () => {
  it("adds a select's options as an enum and a number's bounds, never over a stated constraint or an id picker", () => {
    const [enriched] = withFormConstraints([create], [cardForm]);
    const props = properties(enriched!);
    expect(props.kind).toMatchObject({
      enum: ["bug", "chore", "story"],
      description: expect.stringContaining("/boards/7/cards/new"),
    });
    expect(props.points).toMatchObject({ minimum: 0, maximum: 40 });
    expect(props.state?.enum).toEqual(["open", "closed"]);
    expect(props.owner_id?.enum).toBeUndefined();
    expect(props.title?.enum).toBeUndefined();
  });

  it("leaves documented operations, unrelated pages and forms sharing too few fields alone", () => {
    const documented = { ...create, documented: true, seen_in: ["openapi" as const] };
    const elsewhere = page("/settings", cardForm.forms[0]!.inputs as never);
    const sparse = page("/boards/7/cards/search", [
      { name: "kind", type: "select", options: ["bug", "chore"] },
      { name: "q", type: "text" },
      { name: "page", type: "number", min: "1" },
    ]);
    const [kept] = withFormConstraints([documented], [cardForm]);
    expect(kept).toBe(documented);
    const [unrelated] = withFormConstraints([create], [elsewhere, sparse]);
    expect(unrelated).toBe(create);
  });
});
