import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkConstraintsFromSql } from "../../src/probes/schema/check-constraints.ts";
import { tablesFromPostgresRows } from "../../src/probes/schema/read-postgres-schema.ts";
import { readSqliteSchema } from "../../src/probes/schema/read-sqlite-schema.ts";
import { createFixtureDatabase } from "./fixture-database.ts";
import { writeTree } from "./write-tree.ts";

describe("readSqliteSchema", () => {
  it("reads columns, foreign keys, unique and non-unique indexes and CHECKs, without writing", () => {
    const folder = writeTree({});
    const file = path.join(folder, "library.db");
    createFixtureDatabase(file);
    const before = fs.statSync(file).mtimeMs;
    const tables = readSqliteSchema(file);
    expect(fs.statSync(file).mtimeMs).toBe(before);

    expect(tables.map((table) => table.name)).toEqual(["authors", "books", "loans"]);
    const [authors, books, loans] = tables;
    expect(authors?.columns).toEqual([
      { name: "id", type: "INTEGER", nullable: false, primary_key: true, default: null },
      { name: "email", type: "TEXT", nullable: false, primary_key: false, default: null },
      { name: "check", type: "TEXT", nullable: true, primary_key: false, default: null },
    ]);
    expect(authors?.indexes).toEqual([
      { name: "sqlite_autoindex_authors_1", columns: ["email"], unique: true },
    ]);
    expect(authors?.checks).toEqual([]);

    expect(books?.foreign_keys).toEqual([
      { columns: ["author_id"], references_table: "authors", references_columns: ["id"] },
    ]);
    expect(books?.indexes).toEqual([
      { name: "books_by_author", columns: ["author_id", "status"], unique: false },
      { name: "books_isbn", columns: ["isbn"], unique: true },
    ]);
    expect(books?.checks).toEqual(["price_cents >= 0", "status IN ('draft', 'published')"]);
    expect(books?.columns.find((column) => column.name === "price_cents")?.default).toBe("0");

    // A TEXT primary key accepts NULL in SQLite; the map says what is enforced.
    expect(loans?.columns.find((column) => column.name === "code")).toMatchObject({
      primary_key: true,
      nullable: true,
    });
    expect(loans?.foreign_keys).toEqual([
      { columns: ["author_id"], references_table: "authors", references_columns: ["id"] },
      {
        columns: ["book_id", "author_id"],
        references_table: "books",
        references_columns: ["id", "author_id"],
      },
    ]);
  });

  it("refuses a database file that does not exist instead of creating one", () => {
    const file = path.join(writeTree({}), "absent.db");
    expect(() => readSqliteSchema(file)).toThrow(/cannot open SQLite database/);
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe("CHECK parsing", () => {
  it("skips quoted text and comments and keeps nesting", () => {
    expect(
      checkConstraintsFromSql(`CREATE TABLE t (a TEXT DEFAULT 'CHECK (no)', -- CHECK (neither)
        b INT CHECK ((b > 0) AND (b < 10)), c "CHECK" )`),
    ).toEqual(["(b > 0) AND (b < 10)"]);
  });
});

describe("tablesFromPostgresRows", () => {
  it("maps catalog rows to tables: primary keys, foreign keys, indexes with uniqueness, checks", () => {
    const tables = tablesFromPostgresRows({
      tables: ["orders", "users"],
      columns: [
        {
          table_name: "orders",
          column_name: "id",
          data_type: "bigint",
          nullable: false,
          column_default: "nextval('orders_id_seq'::regclass)",
        },
        {
          table_name: "orders",
          column_name: "user_id",
          data_type: "integer",
          nullable: true,
          column_default: null,
        },
        {
          table_name: "orders",
          column_name: "total",
          data_type: "numeric(10,2)",
          nullable: false,
          column_default: null,
        },
        {
          table_name: "users",
          column_name: "id",
          data_type: "integer",
          nullable: false,
          column_default: null,
        },
      ],
      constraints: [
        {
          table_name: "orders",
          constraint_name: "orders_pkey",
          constraint_type: "p",
          columns: ["id"],
          references_table: null,
          references_columns: null,
          definition: "PRIMARY KEY (id)",
        },
        {
          table_name: "orders",
          constraint_name: "orders_user_id_fkey",
          constraint_type: "f",
          columns: ["user_id"],
          references_table: "users",
          references_columns: ["id"],
          definition: "FOREIGN KEY (user_id) REFERENCES users(id)",
        },
        {
          table_name: "orders",
          constraint_name: "orders_total_check",
          constraint_type: "c",
          columns: ["total"],
          references_table: null,
          references_columns: null,
          definition: "CHECK ((total >= (0)::numeric)) NOT VALID",
        },
        {
          table_name: "users",
          constraint_name: "users_pkey",
          constraint_type: "p",
          columns: ["id"],
          references_table: null,
          references_columns: null,
          definition: "PRIMARY KEY (id)",
        },
      ],
      indexes: [
        { table_name: "orders", index_name: "orders_user_idx", is_unique: false, columns: ["user_id"] },
        { table_name: "users", index_name: "users_lower_email", is_unique: true, columns: ["lower(email)"] },
      ],
    });
    expect(tables).toEqual([
      {
        name: "orders",
        columns: [
          {
            name: "id",
            type: "bigint",
            nullable: false,
            primary_key: true,
            default: "nextval('orders_id_seq'::regclass)",
          },
          { name: "user_id", type: "integer", nullable: true, primary_key: false, default: null },
          { name: "total", type: "numeric(10,2)", nullable: false, primary_key: false, default: null },
        ],
        foreign_keys: [{ columns: ["user_id"], references_table: "users", references_columns: ["id"] }],
        indexes: [{ name: "orders_user_idx", columns: ["user_id"], unique: false }],
        checks: ["total >= (0)::numeric"],
      },
      {
        name: "users",
        columns: [{ name: "id", type: "integer", nullable: false, primary_key: true, default: null }],
        foreign_keys: [],
        indexes: [{ name: "users_lower_email", columns: ["lower(email)"], unique: true }],
        checks: [],
      },
    ]);
  });
});
