import { describe, expect, it } from "vitest";
import { analyzeStatement } from "../../src/probes/code-access/sql-shape.ts";
import {
  isControlStatement,
  looksLikeSql,
  normalizeStatement,
  parameterCount,
} from "../../src/probes/code-access/sql-tokens.ts";

describe("normalizeStatement", () => {
  it("gives one shape to executions that differ only in values", () => {
    const logged = [
      "SELECT id, body FROM comments WHERE post_id = 3.0",
      "select id, body from comments where post_id = 17",
      "SELECT id, body FROM comments WHERE post_id = ?",
      "SELECT   id, body\n FROM comments WHERE post_id = $1;",
    ];
    expect(new Set(logged.map(normalizeStatement))).toEqual(
      new Set(["SELECT id, body FROM comments WHERE post_id = ?"]),
    );
  });

  it("folds IN lists, strings with quotes, negative numbers and function spacing", () => {
    expect(
      normalizeStatement("SELECT * FROM t WHERE a IN (1, 2, 3) AND b = 'it''s' AND c = -4 AND COUNT(*) > 0"),
    ).toBe("SELECT * FROM t WHERE a IN (?) AND b = ? AND c = ? AND COUNT(*) > ?");
  });

  it("tells statements from prose and transaction control", () => {
    expect(looksLikeSql("SELECT * FROM users WHERE id = ?")).toBe(true);
    expect(looksLikeSql("WITH recent AS (SELECT * FROM t) SELECT * FROM recent")).toBe(true);
    expect(looksLikeSql("Update your profile")).toBe(false);
    expect(looksLikeSql("delete this item?")).toBe(false);
    expect(isControlStatement("BEGIN ")).toBe(true);
    expect(isControlStatement("PRAGMA foreign_keys = ON")).toBe(true);
    expect(isControlStatement("SELECT 1")).toBe(false);
  });

  it("counts bind parameters of every style", () => {
    expect(parameterCount("SELECT * FROM t WHERE a = ? AND b = ?")).toEqual({ positional: 2, named: [] });
    expect(parameterCount("SELECT * FROM t WHERE a = $2 AND b = $1")).toEqual({ positional: 2, named: [] });
    expect(parameterCount("SELECT * FROM t WHERE a = :a AND b = @b AND c = %(c)s")).toEqual({
      positional: 0,
      named: ["a", "b", "c"],
    });
  });
});

describe("analyzeStatement", () => {
  it("reads tables, aliases, lookups and joins", () => {
    const shape = analyzeStatement(
      "SELECT o.id FROM orders AS o JOIN users u ON u.id = o.user_id WHERE o.status = 'paid' AND u.email = ? LIMIT 1",
    );
    expect(shape.tables).toEqual([
      { name: "orders", alias: "o" },
      { name: "users", alias: "u" },
    ]);
    expect(shape.equalities).toEqual([
      { column: { qualifier: "o", column: "status" }, literal: "paid" },
      { column: { qualifier: "u", column: "email" } },
    ]);
    expect(shape.joins).toEqual([
      { left: { qualifier: "u", column: "id" }, right: { qualifier: "o", column: "user_id" } },
    ]);
    expect(shape.limitOne).toBe(true);
    expect(shape.literalComparisons).toEqual([
      { column: { qualifier: "o", column: "status" }, values: ["paid"] },
    ]);
  });

  it("tells a guarded decrement from an unguarded one", () => {
    expect(analyzeStatement("UPDATE items SET stock = stock - ? WHERE id = ?").assignments).toEqual([
      { column: "stock", kind: "decrement", guarded: false },
    ]);
    expect(
      analyzeStatement("UPDATE items SET stock = stock - ? WHERE id = ? AND stock >= ?").assignments,
    ).toEqual([{ column: "stock", kind: "decrement", guarded: true }]);
    expect(analyzeStatement("UPDATE items SET stock = MAX(0, stock - ?) WHERE id = ?").assignments).toEqual([
      { column: "stock", kind: "expression" },
    ]);
    expect(analyzeStatement("UPDATE posts SET likes = ?, state = 'open' WHERE id = ?").assignments).toEqual([
      { column: "likes", kind: "value" },
      { column: "state", kind: "value", literal: "open" },
    ]);
  });

  it("reads inserted columns, literal states and conflict handling", () => {
    const shape = analyzeStatement(
      "INSERT INTO orders (user_id, status) VALUES (?, 'pending') ON CONFLICT DO NOTHING",
    );
    expect(shape.insertColumns).toEqual(["user_id", "status"]);
    expect(shape.insertLiterals).toEqual({ status: "pending" });
    expect(shape.onConflict).toBe(true);
  });

  it("marks one-row-by-nature selects and leading-wildcard LIKEs", () => {
    expect(analyzeStatement("SELECT COUNT(*) FROM t WHERE a = ?").aggregateOnly).toBe(true);
    expect(analyzeStatement("SELECT 1 FROM t WHERE a = ?").aggregateOnly).toBe(true);
    expect(analyzeStatement("SELECT a FROM t WHERE a = ?").aggregateOnly).toBe(false);
    expect(analyzeStatement("SELECT a FROM t WHERE name LIKE '%x%'").filters).toEqual([]);
    expect(analyzeStatement("SELECT a FROM t WHERE name LIKE 'x%'").filters).toEqual([
      { column: { column: "name" }, operator: "like" },
    ]);
  });

  it("reads columns named like soft keywords (`key`, `index`, `count`) where a column is expected", () => {
    const shape = analyzeStatement("SELECT * FROM projects p WHERE p.tenant_id = ? AND p.key = ?");
    expect(shape.equalities).toEqual([
      { column: { qualifier: "p", column: "tenant_id" } },
      { column: { qualifier: "p", column: "key" } },
    ]);
    expect(
      analyzeStatement("UPDATE slots SET index = ?, count = count - ? WHERE id = ?").assignments,
    ).toEqual([
      { column: "index", kind: "value" },
      { column: "count", kind: "decrement", guarded: false },
    ]);
    // The same words as functions stay functions.
    expect(analyzeStatement("SELECT COUNT(*) FROM t WHERE a = ? HAVING COUNT(*) > 1").filters).toEqual([
      { column: { column: "a" }, operator: "=" },
    ]);
  });

  it("an aggregate wrapped in a scalar function is still one value over many rows", () => {
    expect(
      analyzeStatement("SELECT COALESCE(MAX(position), 0) + 1 AS next FROM checks WHERE card_id = ?")
        .aggregateOnly,
    ).toBe(true);
    expect(analyzeStatement("SELECT COALESCE(title, '') FROM checks WHERE id = ?").aggregateOnly).toBe(false);
  });
});
