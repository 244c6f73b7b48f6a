import { describe, expect, it } from "vitest";
import type { Table } from "../../src/map/system-map.ts";
import { declaredDomainAssumptions } from "../../src/probes/data/declared-domains.ts";
import { operation } from "../load/fixtures/fixture-target.ts";

// Which table a declaring request writes, when two collections share a name, and declarations read from
// a handler's own checks (an undocumented operation) as well as from the document.

function table(name: string): Table {
  return {
    name,
    columns: [
      { name: "id", type: "INTEGER", nullable: false, primary_key: true },
      { name: "discount_pct", type: "INTEGER", nullable: false, primary_key: false },
    ],
    foreign_keys: [],
    indexes: [],
    checks: [],
  };
}

describe("declared domains", () => {
  it("picks the table by the path's other words, and counts an undocumented handler's checks", () => {
    const bounded = { discount_pct: { type: "integer", minimum: 0, maximum: 100 } };
    const fromCode = {
      ...operation("POST", "/api/logistics/sprints", { body: bounded }),
      documented: false,
      handler: { file: "app.py", line: 12, framework: "flask" },
    };
    const found = declaredDomainAssumptions(
      [operation("POST", "/api/billing/sprints", { body: bounded }), fromCode],
      [table("billing_sprints"), table("logistics_sprints")],
      "openapi.yaml",
    );
    expect(found.map((assumption) => [assumption.id, assumption.sites[0]!.file])).toEqual([
      ["non-negative:billing_sprints.discount_pct", "openapi.yaml"],
      ["non-negative:logistics_sprints.discount_pct", "app.py"],
    ]);
    expect(found[1]!.sites[0]!.via).toMatch(/checks the handler of POST \/api\/logistics\/sprints makes/);
  });
});
