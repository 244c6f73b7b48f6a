import { describe, expect, it } from "vitest";
import type { Table } from "../../src/map/system-map.ts";
import { pairValues } from "../../src/probes/data/order-trial.ts";
import { orderedPairAssumptions, orderedPairs } from "../../src/probes/data/ordered-pairs.ts";
import { operation } from "../load/fixtures/fixture-target.ts";

// Which columns bound one span, in the naming styles real schemas use, and the look-alikes that do not.

function table(name: string, columns: Array<[string, string]>, checks: string[] = []): Table {
  return {
    name,
    columns: [
      { name: "id", type: "INTEGER", nullable: false, primary_key: true },
      ...columns.map(([column, type]) => ({ name: column, type, nullable: true, primary_key: false })),
    ],
    foreign_keys: [],
    indexes: [],
    checks,
  };
}

const pairsOf = (subject: Table, hints: Record<string, { format?: string; type?: string }> = {}) =>
  orderedPairs(subject, (column) => hints[column] ?? {}).map(
    (pair) => `${pair.lower}<${pair.upper}:${pair.values}`,
  );

describe("ordered pairs", () => {
  it("pairs start and end in the naming styles of real schemas, with the values their type holds", () => {
    expect(
      pairsOf(
        table("stays", [
          ["starts_on", "TEXT"],
          ["ends_on", "TEXT"],
          ["check_in", "DATE"],
          ["check_out", "DATE"],
          ["valid_from", "timestamp with time zone"],
          ["valid_until", "timestamp with time zone"],
          ["startDate", "TEXT"],
          ["endDate", "TEXT"],
          ["min_guests", "INTEGER"],
          ["max_guests", "INTEGER"],
        ]),
      ),
    ).toEqual([
      "starts_on<ends_on:date",
      "check_in<check_out:date",
      "valid_from<valid_until:date-time",
      "startDate<endDate:date",
      "min_guests<max_guests:number",
    ]);
  });

  it("leaves alone pairs whose values do not order: names, addresses, times of day, untyped text", () => {
    expect(
      pairsOf(
        table("people", [
          ["first_name", "TEXT"],
          ["last_name", "TEXT"],
          ["from_address", "TEXT"],
          ["to_address", "TEXT"],
          ["opens", "TIME"],
          ["closes", "TIME"],
          ["start_label", "TEXT"],
          ["end_label", "TEXT"],
          ["in", "INTEGER"],
          ["out", "INTEGER"],
        ]),
      ),
    ).toEqual([]);
  });

  it("takes the format a request schema declares for text columns", () => {
    const windows = table("windows", [
      ["opens", "TEXT"],
      ["closes", "TEXT"],
    ]);
    expect(pairsOf(windows)).toEqual([]);
    expect(pairsOf(windows, { opens: { format: "date-time" }, closes: { format: "date-time" } })).toEqual([
      "opens<closes:date-time",
    ]);
  });

  it("is an assumption only where a request writes the pair, enforced by a CHECK that names both", () => {
    const columns: Array<[string, string]> = [
      ["starts_on", "DATE"],
      ["ends_on", "DATE"],
    ];
    const tables = [table("trips", columns), table("leaves", columns, ["ends_on >= starts_on"])];
    const date = { type: "string", format: "date" };
    const operations = [
      operation("POST", "/api/trips", { body: { starts_on: date, ends_on: date } }),
      operation("PATCH", "/api/trips/{id}", { body: { ends_on: date } }),
      operation("POST", "/api/leaves", { body: { starts_on: date, ends_on: date } }),
    ];
    const found = orderedPairAssumptions(operations, [...tables, table("audits", columns)]);
    expect(found.map((assumption) => [assumption.id, assumption.enforced, assumption.sites.length])).toEqual([
      ["ordered:trips.starts_on,ends_on", false, 2],
      ["ordered:leaves.starts_on,ends_on", true, 1],
    ]);
  });

  it("chooses a valid and an inverted pair inside the declared bounds", () => {
    expect(pairValues("number", { type: "integer", minimum: 1, maximum: 10 })).toEqual({
      lower: 3,
      upper: 4,
      inverted: 2,
    });
    const dates = pairValues("date");
    expect(String(dates.inverted) < String(dates.lower)).toBe(true);
    expect(String(dates.lower) < String(dates.upper)).toBe(true);
  });
});
