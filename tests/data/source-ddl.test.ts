import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Table } from "../../src/map/system-map.ts";
import { ddlStatements, readSchemaFromSource, stringLiterals } from "../../src/probes/schema/source-ddl.ts";

// The schema a target declares in its source, for a database qaas cannot connect to: DDL in migrations
// and in the SQL strings of code, in the spellings real projects use.

let root: string;

const FILES: Record<string, string> = {
  // knex / node-postgres style: a template literal with an interpolated key type.
  "src/db.mjs": `const key = kind === "sqlite" ? "INTEGER PRIMARY KEY" : "SERIAL PRIMARY KEY";
export const schema = \`
  CREATE TABLE accounts (id \${key}, email TEXT NOT NULL, handle TEXT NOT NULL UNIQUE);
  CREATE UNIQUE INDEX accounts_email_ci ON accounts (lower(email));
  CREATE TABLE plans (id \${key}, account_id INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'draft');
  CREATE UNIQUE INDEX plans_one_active ON plans (account_id) WHERE status = 'active';
\`;`,
  // Python: a triple-quoted script with a foreign key and a CHECK.
  "app/models.py": `SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (id SERIAL PRIMARY KEY, total INTEGER NOT NULL CHECK (total >= 0));
CREATE TABLE IF NOT EXISTS order_lines (
    id SERIAL PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    quantity INTEGER NOT NULL
);
"""`,
  // DDL kept as JSON inside a string literal.
  "app/tables.py": `TABLES = json.loads("[{\\"name\\": \\"notes\\", \\"ddl\\": \\"CREATE TABLE notes (id {key}, plan_id INTEGER NOT NULL, body TEXT NOT NULL);\\\\nCREATE INDEX notes_plan ON notes (plan_id);\\"}]")`,
  // A PostgreSQL migration SQLite would refuse as written.
  "migrations/001_init.sql": `-- first migration
CREATE TABLE events (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind TEXT NOT NULL DEFAULT 'info'::text,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX CONCURRENTLY events_kind ON events USING btree (kind);`,
  "README.md": "CREATE TABLE ignored (id INTEGER);",
};

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-source-ddl-"));
  for (const [file, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
});
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const named = (tables: Table[], name: string) => tables.find((table) => table.name === name)!;

describe("schema from the source's DDL", () => {
  it("reads tables, keys, unique and partial indexes, foreign keys and CHECKs from code and migrations", () => {
    const schema = readSchemaFromSource(root);
    expect(schema.tables.map((table) => table.name).sort()).toEqual([
      "accounts",
      "events",
      "notes",
      "order_lines",
      "orders",
      "plans",
    ]);
    expect(schema.files).not.toContain("README.md");
    const accounts = named(schema.tables, "accounts");
    expect(accounts.columns.find((column) => column.name === "id")?.primary_key).toBe(true);
    expect(accounts.indexes.filter((index) => index.unique).map((index) => index.columns)).toEqual(
      expect.arrayContaining([["handle"], ["<expression>"]]),
    );
    expect(named(schema.tables, "plans").indexes).toContainEqual(
      expect.objectContaining({ name: "plans_one_active", unique: true }),
    );
    expect(named(schema.tables, "order_lines").foreign_keys).toEqual([
      { columns: ["order_id"], references_table: "orders", references_columns: ["id"] },
    ]);
    expect(named(schema.tables, "orders").checks).toEqual(["total >= 0"]);
    // No foreign key declared is read as none: the missing constraint stays visible.
    expect(named(schema.tables, "notes").foreign_keys).toEqual([]);
    expect(named(schema.tables, "events").indexes.map((index) => index.name)).toEqual(["events_kind"]);
  });

  it("finds DDL only inside string literals of code, unescaped", () => {
    const literals = stringLiterals(
      `const a = "x"; db.exec('CREATE TABLE t (id INTEGER, note TEXT DEFAULT \\'\\')'); // it's`,
    );
    expect(literals).toContain("CREATE TABLE t (id INTEGER, note TEXT DEFAULT '')");
    expect(ddlStatements('select 1; CREATE TABLE u (id ${key}, n INT) extra"}')).toEqual([
      "CREATE TABLE u (id INTEGER PRIMARY KEY, n INT)",
    ]);
  });
});
