import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Table } from "../../src/map/system-map.ts";
import type { CodeAccessScan, DataAccess } from "../../src/probes/code-access/data-access-types.ts";
import { scanCodeAccess } from "../../src/probes/code-access/scan-code-access.ts";
import { analyzeStatement } from "../../src/probes/code-access/sql-shape.ts";
import { inferAssumptions } from "../../src/probes/data/assumptions.ts";
import { nameForms, tableForPath } from "../../src/probes/data/naming.ts";

// The constraint shapes application code relies on without the schema: a reference named by convention,
// a key that holds only among rows in one state ("one active per owner"), a key compared ignoring case,
// and the one-row helpers Python projects wrap their driver in.

function table(name: string, columns: string[], extra: Partial<Table> = {}): Table {
  return {
    name,
    columns: columns.map((column) => ({
      name: column,
      type: column.endsWith("_id") || column === "id" ? "INTEGER" : "TEXT",
      nullable: column !== "id",
      primary_key: column === "id",
    })),
    foreign_keys: [],
    indexes: [],
    checks: [],
    ...extra,
  };
}

let line = 0;
function sql(text: string, cardinality: DataAccess["cardinality"], scope = `f${++line}@1`): DataAccess {
  line += 1;
  return {
    file: "src/a.ts",
    line,
    language: "javascript",
    scope,
    kind: "sql",
    sql: text,
    cardinality,
    via: cardinality,
  };
}

function scanOf(accesses: DataAccess[]): CodeAccessScan {
  return {
    accesses,
    comparisons: [],
    modelTables: {},
    modelColumns: {},
    enablesForeignKeys: true,
    files: 1,
    truncated: false,
    problems: [],
  };
}

const ids = (tables: Table[], accesses: DataAccess[]) => inferAssumptions(tables, scanOf(accesses));

describe("names", () => {
  it("pluralises a word ending in a vowel and y with an s (survey → surveys, key → keys)", () => {
    expect(nameForms("survey")).toContain("surveys");
    expect(nameForms("key")).toContain("keys");
    expect(nameForms("category")).toContain("categories");
  });

  it("settles an ambiguous collection name by the path's other words", () => {
    const tables = [
      table("reports_reels", ["id"]),
      table("media_reels", ["id"]),
      table("reports_reel_lines", ["id", "reel_id"]),
      table("billing_invoice_lines", ["id", "invoice_id"]),
    ];
    expect(tableForPath(tables, "/api/v1/reports/reels/{id}/lines")?.name).toBe("reports_reel_lines");
    expect(tableForPath(tables, "/api/reports/reels")?.name).toBe("reports_reels");
    expect(tableForPath(tables, "/api/lines")).toBeUndefined();
  });
});

describe("references by convention", () => {
  const orders = table("orders", ["id", "owner_id", "title"]);
  const insert = sql("INSERT INTO order_lines (order_id, body) VALUES (?, ?)", "write");

  it("reads a <parent>_id column the code writes, with no foreign key, as a reference only a trial confirms", () => {
    const lines = table("order_lines", ["id", "order_id", "body"]);
    const found = ids([orders, lines], [insert]).find(
      (entry) => entry.id === "foreign-key:order_lines.order_id",
    );
    expect(found).toMatchObject({
      enforced: false,
      namedOnly: true,
      references: { table: "orders", column: "id" },
    });
  });

  it("leaves alone a declared key, a scope column naming no table, and a column no code writes", () => {
    const lines = table("order_lines", ["id", "order_id", "owner_id", "body"], {
      foreign_keys: [{ columns: ["order_id"], references_table: "orders", references_columns: ["id"] }],
    });
    const unwritten = table("order_notes", ["id", "order_id"]);
    const found = ids(
      [orders, lines, unwritten],
      [insert, sql("INSERT INTO order_lines (owner_id) VALUES (?)", "write")],
    );
    expect(found.filter((entry) => entry.kind === "foreign-key")).toEqual([]);
  });

  it("among several *_reels tables, picks the parent the child's name shares its words with", () => {
    const tables = [
      table("reports_reels", ["id"]),
      table("media_reels", ["id"]),
      table("reports_reel_lines", ["id", "reel_id", "body"]),
    ];
    const found = ids(tables, [sql("INSERT INTO reports_reel_lines (reel_id, body) VALUES (?, ?)", "write")]);
    expect(found.find((entry) => entry.kind === "foreign-key")?.references?.table).toBe("reports_reels");
  });
});

describe("conditional and case-insensitive keys", () => {
  const plans = table("plans", ["id", "owner_id", "status", "title"]);

  it("reads `owner_id = ? AND status = 'active'` fetched as one as a key among the active rows only", () => {
    const found = ids(
      [plans],
      [
        sql("SELECT id FROM plans WHERE owner_id = ? AND status = 'active'", "single"),
        sql("SELECT id, title FROM plans WHERE owner_id = ? ORDER BY id", "many"),
      ],
    );
    expect(found.filter((entry) => entry.kind === "unique").map((entry) => [entry.id, entry.where])).toEqual([
      ["unique:plans.owner_id,status", { status: "active" }],
    ]);
  });

  it("a partial unique index over the scope enforces the conditional key", () => {
    const indexed = table("plans", ["id", "owner_id", "status"], {
      indexes: [{ name: "plans_one_active", columns: ["owner_id"], unique: true }],
    });
    const found = ids(
      [indexed],
      [sql("SELECT id FROM plans WHERE owner_id = ? AND status = 'active'", "single")],
    );
    expect(found.find((entry) => entry.kind === "unique")?.enforced).toBe(true);
  });

  it("reads `lower(email) = lower(?)` as a lookup by email", () => {
    expect(analyzeStatement("SELECT id FROM accounts WHERE lower(email) = lower(?)").equalities).toEqual([
      { column: { column: "email" }, caseFolded: true },
    ]);
    const accounts = table("accounts", ["id", "email"]);
    const found = ids(
      [accounts],
      [sql("SELECT id, email FROM accounts WHERE LOWER(email) = LOWER($1)", "single")],
    );
    expect(found.map((entry) => entry.id)).toContain("unique:accounts.email");
  });
});

describe("Python one-row helpers", () => {
  it("reads db.get(sql, args) and query_db(sql, args, one=True) as single rows, db.all(sql) as many", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-py-helpers-"));
    try {
      fs.writeFileSync(
        path.join(root, "app.py"),
        [
          "def find(db, code):",
          '    return db.get("SELECT id FROM items WHERE code = ?", (code,))',
          "def listing(db, owner):",
          '    return db.all("SELECT id FROM items WHERE owner_id = ?", (owner,))',
          "def first(code):",
          '    return query_db("SELECT id FROM items WHERE sku = ?", (code,), one=True)',
          "",
        ].join("\n"),
      );
      const scan = await scanCodeAccess(root);
      const byText = (fragment: string) => scan.accesses.find((access) => access.sql?.includes(fragment));
      expect(byText("code = ?")?.cardinality).toBe("single");
      expect(byText("owner_id = ?")?.cardinality).toBe("many");
      expect(byText("sku = ?")?.cardinality).toBe("single");
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
