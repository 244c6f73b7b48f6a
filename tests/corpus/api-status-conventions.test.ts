import { describe, expect, it } from "vitest";
import type { WrongStatusKnobs } from "../../corpus/generator/families/api-status.ts";
import { generateCorpus } from "../../corpus/generator/generate.ts";
import { type Row, rowMaker } from "../../corpus/model/row.ts";

// The wrong-status variants that need no document: each vulnerable row's code answers the flawed status
// and its twin the right one, and a look-alike knob on a vulnerable row is refused (a look-alike is safe).

const status = rowMaker<WrongStatusKnobs>("wrong-status", "low");
/** A table row as the generator takes it (the tables' arrays widen their knobs the same way). */
const generic = (row: Row<WrongStatusKnobs>): Row => row as unknown as Row;

function codeOf(row: Row<WrongStatusKnobs>): { node: string; python: string } {
  const corpus = generateCorpus([generic(row)]);
  const variant = corpus.models.flatMap((model) => model.variants).find((one) => one.row.id === row.id)!;
  return { node: variant.built.endpoint.node, python: variant.built.endpoint.python };
}

describe("wrong statuses without a document", () => {
  it("a missing record: 200 with null or {} when vulnerable, 404 when safe", () => {
    const empty = codeOf(status.v("T-1", "python-sqlite-cookie-nodoc", { flaw: "missing-200-empty" }));
    expect(empty.python).toContain("return jsonify(None)");
    const object = codeOf(
      status.v("T-2", "node-postgres-apikey-partialdoc", { flaw: "missing-200-empty", empty: "object" }),
    );
    expect(object.node).toContain("return {};");
    const safe = codeOf(status.s("T-3", "python-sqlite-cookie-nodoc", { flaw: "missing-200-empty" }));
    expect(safe.python).toContain("404");
    expect(safe.python).not.toContain("jsonify(None)");
  });

  it("a creation: 200 when vulnerable, 201 when safe, 200 on the upsert look-alike", () => {
    const flawed = codeOf(
      status.v("T-4", "node-postgres-apikey-partialdoc", { flaw: "create-200-inconsistent" }),
    );
    expect(flawed.node).toContain("reply.code(200).send(row)");
    const twin = codeOf(status.s("T-5", "python-sqlite-cookie-nodoc", { flaw: "create-200-inconsistent" }));
    expect(twin.python).toContain("return jsonify(row), 201");
    const upsert = codeOf(
      status.s("T-6", "python-sqlite-cookie-nodoc", {
        flaw: "create-200-inconsistent",
        lookalike: "upsert-200",
      }),
    );
    expect(upsert.python).toContain("UPDATE records SET title");
  });

  it("refuses a look-alike on a vulnerable row and a look-alike of the other flaw", () => {
    const lookalikeOnFlaw = status.v("T-7", "python-sqlite-cookie-nodoc", {
      flaw: "missing-200-empty",
      lookalike: "search-empty",
    });
    expect(() => generateCorpus([generic(lookalikeOnFlaw)])).toThrow(/look-alike/);
    const wrongLookalike = status.s("T-8", "python-sqlite-cookie-nodoc", {
      flaw: "missing-200-empty",
      lookalike: "upsert-200",
    });
    expect(() => generateCorpus([generic(wrongLookalike)])).toThrow(/look-alike of creations/);
  });
});
