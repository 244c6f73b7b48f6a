import { describe, expect, it } from "vitest";
import type { Table } from "../../src/map/system-map.ts";
import type { CodeAccessScan, DataAccess } from "../../src/probes/code-access/data-access-types.ts";
import { inferAssumptions } from "../../src/probes/data/assumptions.ts";

// What counts as an assumption, and what does not: the look-alikes a careless reader would flag.

function table(name: string, columns: string[], extra: Partial<Table> = {}): Table {
  return {
    name,
    columns: columns.map((column) => ({
      name: column,
      type: column.endsWith("_id") || column === "id" || column === "stock" ? "INTEGER" : "TEXT",
      nullable: column !== "id",
      primary_key: column === "id",
    })),
    foreign_keys: [],
    indexes: [],
    checks: [],
    ...extra,
  };
}

const TABLES: Table[] = [
  table("users", ["id", "email", "username", "status"], {
    indexes: [{ name: "u_username", columns: ["username"], unique: true }],
  }),
  table("carts", ["id", "user_id"]),
  table("cart_items", ["id", "cart_id", "product_id", "quantity"], {
    indexes: [{ name: "ci_cart_product", columns: ["cart_id", "product_id"], unique: true }],
  }),
  table("products", ["id", "sku", "stock"], { checks: [] }),
  table("events", ["id", "user_id", "kind"]),
  table("tickets", ["id", "state"], { checks: ["state IN ('open', 'closed')"] }),
  table("tasks", ["id", "state"]),
];

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

function scanOf(accesses: DataAccess[], extra: Partial<CodeAccessScan> = {}): CodeAccessScan {
  return {
    accesses,
    comparisons: [],
    modelTables: {},
    modelColumns: {},
    enablesForeignKeys: true,
    files: 1,
    truncated: false,
    problems: [],
    ...extra,
  };
}

const ids = (scan: CodeAccessScan) =>
  inferAssumptions(TABLES, scan).map(
    (assumption) => `${assumption.id}${assumption.enforced ? " (enforced)" : ""}`,
  );

describe("inferAssumptions", () => {
  it("a single-row lookup by a column no unique index covers is a uniqueness assumption; filters by literal are not part of the key", () => {
    expect(ids(scanOf([sql("SELECT * FROM users WHERE email = ? AND status = 'active'", "single")]))).toEqual(
      ["unique:users.email"],
    );
    expect(ids(scanOf([sql("SELECT * FROM users WHERE username = ?", "single")]))).toEqual([
      "unique:users.username (enforced)",
    ]);
    expect(
      ids(scanOf([sql("SELECT * FROM cart_items WHERE cart_id = ? AND product_id = ?", "single")])),
    ).toEqual(["unique:cart_items.cart_id,product_id (enforced)"]);
  });

  it("a lookup by a scope column and a natural key named like a keyword is a composite uniqueness assumption", () => {
    const tables = [
      table("projects", ["id", "tenant_id", "key"], {
        indexes: [{ name: "p_tenant", columns: ["tenant_id"], unique: false }],
      }),
    ];
    const found = inferAssumptions(
      tables,
      scanOf([sql("SELECT * FROM projects WHERE tenant_id = ? AND key = ?", "single")]),
    ).map((assumption) => `${assumption.id}${assumption.enforced ? " (enforced)" : ""}`);
    expect(found).toEqual(["unique:projects.key,tenant_id"]);
    // With a unique index over both, it is enforced.
    const indexed = [
      table("projects", ["id", "tenant_id", "key"], {
        indexes: [{ name: "p_key", columns: ["tenant_id", "key"], unique: true }],
      }),
    ];
    expect(
      inferAssumptions(
        indexed,
        scanOf([sql("SELECT * FROM projects WHERE tenant_id = ? AND key = ?", "single")]),
      )[0]?.enforced,
    ).toBe(true);
  });

  it("a next number computed over a parent's rows is no lookup, and children deleted by their parent are noted", () => {
    const tables = [table("tasks", ["id", "state"]), table("steps", ["id", "task_id", "position"])];
    const found = inferAssumptions(
      tables,
      scanOf([
        sql("SELECT COALESCE(MAX(position), 0) + 1 AS next FROM steps WHERE task_id = ?", "single", "add@1"),
        sql("INSERT INTO steps (task_id, position) VALUES (?, ?)", "write", "add@1"),
        sql("SELECT s.id FROM steps s JOIN tasks t ON t.id = s.task_id WHERE s.id = ?", "single"),
        sql("DELETE FROM steps WHERE task_id = ?", "write"),
      ]),
    );
    const relevant = found.filter((assumption) => assumption.kind !== "not-null");
    expect(relevant.map((assumption) => assumption.id)).toEqual([
      "foreign-key:steps.task_id",
      "unique:steps.id",
    ]);
    expect(relevant[0]!.cascadedInCode).toBe(true);
  });

  it("is not fooled by lookups that pick one row of many on purpose", () => {
    expect(
      ids(scanOf([sql("SELECT * FROM events WHERE user_id = ? ORDER BY id DESC LIMIT 1", "single")])),
    ).toEqual([]);
    expect(ids(scanOf([sql("SELECT COUNT(*) AS n FROM events WHERE user_id = ?", "single")]))).toEqual([]);
    // An overlap check: a row of the user's within a range, not the user's one row.
    expect(
      ids(scanOf([sql("SELECT id FROM events WHERE user_id = ? AND kind < ? AND id != ?", "single")])),
    ).toEqual([]);
    expect(ids(scanOf([sql("SELECT id FROM events WHERE user_id = ? AND id != ?", "single")]))).toEqual([
      "unique:events.user_id",
    ]);
    // The same lookup read as many rows elsewhere: the column is a plain reference, not a key.
    expect(
      ids(
        scanOf([
          sql("SELECT * FROM events WHERE user_id = ?", "single"),
          sql("SELECT * FROM events WHERE user_id = ?", "many"),
        ]),
      ),
    ).toEqual([]);
  });

  it("a check before an insert in one handler is a uniqueness the code enforces itself", () => {
    const assumptions = inferAssumptions(
      TABLES,
      scanOf([
        sql("SELECT 1 FROM products WHERE sku = ?", "single", "create@1"),
        sql("INSERT INTO products (sku, stock) VALUES (?, ?)", "write", "create@1"),
      ]),
    );
    const unique = assumptions.filter((assumption) => assumption.kind === "unique");
    expect(unique.map((assumption) => [assumption.id, assumption.checkedInCode])).toEqual([
      ["unique:products.sku", true],
    ]);
    // A count against a quota before inserting is not a uniqueness check.
    const quota = inferAssumptions(
      TABLES,
      scanOf([
        sql("SELECT COUNT(*) AS n FROM events WHERE user_id = ?", "single", "track@1"),
        sql("INSERT INTO events (user_id, kind) VALUES (?, ?)", "write", "track@1"),
      ]),
    );
    expect(quota.filter((assumption) => assumption.kind === "unique")).toEqual([]);
    // Every insert writes sku and stock, which the schema lets be NULL: weak assumptions, listed too.
    expect(
      assumptions.filter((assumption) => assumption.kind === "not-null").map((assumption) => assumption.id),
    ).toEqual(["not-null:products.sku", "not-null:products.stock"]);
  });

  it("reads foreign keys from joins between a key and a non-key column only", () => {
    expect(ids(scanOf([sql("SELECT * FROM carts c JOIN users u ON u.id = c.user_id", "many")]))).toEqual([
      "foreign-key:carts.user_id",
    ]);
    expect(
      ids(scanOf([sql("SELECT * FROM carts c JOIN events e ON e.user_id = c.user_id", "many")])),
    ).toEqual([]);
    const declared = TABLES.map((entry) =>
      entry.name === "carts"
        ? {
            ...entry,
            foreign_keys: [{ columns: ["user_id"], references_table: "users", references_columns: ["id"] }],
          }
        : entry,
    );
    expect(
      inferAssumptions(
        declared,
        scanOf([sql("SELECT * FROM carts c JOIN users u ON u.id = c.user_id", "many")]),
      )[0]?.enforced,
    ).toBe(true);
  });

  it("flags decrements without a lower bound, not guarded or CHECKed ones", () => {
    expect(ids(scanOf([sql("UPDATE products SET stock = stock - ? WHERE id = ?", "write")]))).toEqual([
      "non-negative:products.stock",
    ]);
    expect(
      ids(scanOf([sql("UPDATE products SET stock = stock - ? WHERE id = ? AND stock >= ?", "write")])),
    ).toEqual([]);
    const checked = TABLES.map((entry) =>
      entry.name === "products" ? { ...entry, checks: ["stock >= 0"] } : entry,
    );
    expect(
      inferAssumptions(
        checked,
        scanOf([sql("UPDATE products SET stock = stock - ? WHERE id = ?", "write")]),
      )[0]?.enforced,
    ).toBe(true);
  });

  it("an enum-like column: fixed strings from SQL and code; enforced when a CHECK lists them", () => {
    const accesses = [
      sql("UPDATE tasks SET state = 'done' WHERE id = ?", "write"),
      sql("UPDATE tickets SET state = 'closed' WHERE id = ?", "write"),
    ];
    const comparisons = [
      { file: "src/a.ts", line: 1, property: "state", values: ["open"] },
      { file: "src/a.ts", line: 2, property: "state", values: ["Some free text with spaces"] },
    ];
    const found = inferAssumptions(TABLES, scanOf(accesses, { comparisons: comparisons.slice(0, 1) }));
    expect(found.map((assumption) => [assumption.id, assumption.enforced, assumption.values])).toEqual([
      ["allowed-values:tasks.state", false, ["done", "open"]],
      ["allowed-values:tickets.state", true, ["closed", "open"]],
    ]);
    // A value that is not a state (free text) means the column is not enum-like at all.
    expect(
      inferAssumptions(TABLES, scanOf(accesses.slice(0, 1), { comparisons })).map(
        (assumption) => assumption.id,
      ),
    ).toEqual([]);
  });

  it("maps ORM lookups to tables through declared models and naming", () => {
    const orm = (model: string, columns: string[]): DataAccess => ({
      file: "src/orm.ts",
      line: 1,
      language: "javascript",
      scope: "f@1",
      kind: "orm",
      cardinality: "single",
      via: "findFirst",
      model,
      columns,
    });
    expect(ids(scanOf([orm("user", ["email"]), orm("Product", ["sku"]), orm("Account", ["login"])]))).toEqual(
      ["unique:products.sku", "unique:users.email"],
    );
    expect(
      ids(
        scanOf([orm("Member", ["handle"])], {
          modelTables: { Member: "users" },
          modelColumns: { "Member.handle": "username" },
        }),
      ),
    ).toEqual(["unique:users.username (enforced)"]);
  });
});
