import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import { resourceFamilies } from "../../src/probes/api/operation-index.ts";
import { objectSlots } from "../../src/probes/auditor/access-slots.ts";
import { undocumented } from "../fixtures/probe-harness.ts";

// Where an operation takes one object's id, and whose objects those are.

function withQuery(operation: Operation, name: string): Operation {
  return {
    ...operation,
    parameters: [{ name, in: "query", required: true, schema: { type: "string" } }],
  } as Operation;
}

describe("object slots", () => {
  it("gives an id in the query of a collection's view to that collection, not to the view itself", () => {
    const operations = [
      undocumented("GET", "/api/permits"),
      undocumented("POST", "/api/permits"),
      withQuery(undocumented("GET", "/api/permits/detail"), "id"),
    ];
    const slots = objectSlots(operations, resourceFamilies(operations));
    expect(slots.map((slot) => [slot.operation.path, slot.place, slot.name, slot.family.collection])).toEqual(
      [["/api/permits/detail", "query", "id", "/api/permits"]],
    );
  });

  it("gives an item path's id to its own family and an action's to the collection before it", () => {
    const operations = [
      undocumented("POST", "/api/polls"),
      undocumented("PATCH", "/api/polls/{id}"),
      undocumented("POST", "/api/drivers"),
      undocumented("POST", "/api/admin/drivers/{id}/approve"),
    ];
    const slots = objectSlots(operations, resourceFamilies(operations));
    expect(slots.map((slot) => [slot.operation.path, slot.place, slot.family.collection])).toEqual([
      ["/api/polls/{id}", "path", "/api/polls"],
      ["/api/admin/drivers/{id}/approve", "path", "/api/drivers"],
    ]);
  });

  it("gives an admin action the family of the same noun that shares most of its path, not the first", () => {
    const operations = [
      undocumented("POST", "/api/payroll/batches"),
      undocumented("POST", "/api/projects/batches"),
      undocumented("POST", "/api/v1/crm/batches"),
      undocumented("POST", "/api/admin/projects/batches/{id}/approve"),
    ];
    const slots = objectSlots(operations, resourceFamilies(operations));
    expect(slots.map((slot) => [slot.operation.path, slot.family.collection])).toEqual([
      ["/api/admin/projects/batches/{id}/approve", "/api/projects/batches"],
    ]);
  });
});
