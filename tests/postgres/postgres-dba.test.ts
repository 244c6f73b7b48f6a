import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvelopeDraft } from "../../src/envelope/envelope-draft.ts";
import { readPostgresSchema } from "../../src/probes/schema/read-postgres-schema.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { LoadedTarget } from "../../src/tools/context.ts";
import { dbTools } from "../../src/tools/servers/db-server.ts";
import { callTool, fakeRunContext } from "../support/fake-run-context.ts";
import { type PostgresServer, startPostgres } from "../support/postgres-server.ts";

// DBA against a real PostgreSQL server (no application running): the schema read from the catalog,
// the code's assumptions compared with it, trials in rolled-back transactions, plans from EXPLAIN.
// Missing server binaries fail this test with what to install; it is never skipped.

const SCHEMA = `
CREATE TABLE accounts (id serial PRIMARY KEY, email text NOT NULL, handle text NOT NULL UNIQUE);
CREATE INDEX accounts_email ON accounts (email);
CREATE TABLE items (id serial PRIMARY KEY, sku text NOT NULL, stock integer NOT NULL, reserved integer NOT NULL CHECK (reserved >= 0));
CREATE TABLE holds (id serial PRIMARY KEY, item_id integer NOT NULL, account_id integer NOT NULL REFERENCES accounts (id), status text NOT NULL);
INSERT INTO accounts (email, handle) VALUES ('a@example.test', 'a'), ('b@example.test', 'b');
INSERT INTO items (sku, stock, reserved) VALUES ('S-1', 3, 0), ('S-2', 0, 0);
INSERT INTO holds (item_id, account_id, status) VALUES (1, 1, 'open');
`;

// The application's data access, as a repository module using node-postgres.
const CODE = `
import pg from "pg";
const pool = new pg.Pool();
export async function accountByEmail(email: string) {
  const result = await pool.query("SELECT id, email FROM accounts WHERE email = $1", [email]);
  return result.rows[0];
}
export async function accountByHandle(handle: string) {
  const { rows: [account] } = await pool.query("SELECT id FROM accounts WHERE handle = $1", [handle]);
  return account;
}
export async function take(itemId: number, quantity: number) {
  await pool.query("UPDATE items SET stock = stock - $1 WHERE id = $2", [quantity, itemId]);
  await pool.query("UPDATE items SET reserved = reserved - $1 WHERE id = $2", [quantity, itemId]);
}
export async function holdsOf(accountId: number) {
  return (await pool.query(
    "SELECT h.id, i.sku, a.email FROM holds h JOIN items i ON i.id = h.item_id JOIN accounts a ON a.id = h.account_id WHERE h.account_id = $1",
    [accountId],
  )).rows;
}
`;

let server: PostgresServer;
let root: string;
beforeAll(async () => {
  server = await startPostgres();
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query(SCHEMA);
  await client.end();
  root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-postgres-app-"));
  fs.mkdirSync(path.join(root, "src"));
  fs.writeFileSync(path.join(root, "src", "repository.ts"), CODE);
  process.env.QAAS_TEST_POSTGRES_URL = server.url;
}, 60_000);
afterAll(async () => {
  await server?.stop();
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

function target(environment: Record<string, unknown> = { mode: "none" }): LoadedTarget {
  const profile = TargetProfileSchema.parse({
    name: "postgres-fixture",
    source: { path: "." },
    environment,
    database: { kind: "postgres", url: "secret_ref:QAAS_TEST_POSTGRES_URL" },
  });
  return { profile, file: path.join(root, "qaas.yaml"), root, goldenLedger: undefined };
}

const tool = (name: string) => dbTools.find((candidate) => candidate.name === name)!;

async function counts(): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    const row = (
      await client.query(
        "SELECT (SELECT COUNT(*) FROM accounts) AS accounts, (SELECT COUNT(*) FROM items) AS items, (SELECT COUNT(*) FROM holds) AS holds, (SELECT MIN(stock) FROM items) AS min_stock",
      )
    ).rows[0] as Record<string, string>;
    return Object.fromEntries(Object.entries(row).map(([key, value]) => [key, Number(value)]));
  } finally {
    await client.end();
  }
}

describe("DBA on PostgreSQL", () => {
  it("reads the schema the server enforces", async () => {
    const tables = await readPostgresSchema(server.url);
    const byName = Object.fromEntries(tables.map((table) => [table.name, table]));
    expect(Object.keys(byName).sort()).toEqual(["accounts", "holds", "items"]);
    expect(byName.accounts!.indexes.map((index) => [index.columns.join(","), index.unique]).sort()).toEqual([
      ["email", false],
      ["handle", true],
    ]);
    expect(byName.holds!.foreign_keys).toEqual([
      { columns: ["account_id"], references_table: "accounts", references_columns: ["id"] },
    ]);
    expect(byName.items!.checks.join(" ")).toMatch(/reserved >= 0/);
  });

  it("infers the assumptions and confirms the planted gaps in rolled-back transactions", async () => {
    const context = fakeRunContext({ target: target() });
    const inferred = await callTool(tool("infer_data_assumptions"), {}, context);
    expect(inferred.ok).toBe(true);
    const assumptions = (inferred as { data: { assumptions: Array<{ id: string; enforced: boolean }> } }).data
      .assumptions;
    expect(
      assumptions.map((assumption) => `${assumption.id}${assumption.enforced ? " (enforced)" : ""}`),
    ).toEqual([
      "foreign-key:holds.account_id (enforced)",
      "foreign-key:holds.item_id",
      "non-negative:items.reserved (enforced)",
      "non-negative:items.stock",
      "unique:accounts.email",
      "unique:accounts.handle (enforced)",
    ]);
    const before = await counts();
    const confirmed = await callTool(tool("confirm_constraint"), {}, context);
    expect(confirmed.ok).toBe(true);
    const drafts = (confirmed as { data: { candidates: EnvelopeDraft[] } }).data.candidates;
    expect(
      drafts.map((draft) => `${draft.defect_class} ${draft.location.value} ${draft.confidence}`),
    ).toEqual([
      "missing-constraint holds.item_id 0.75",
      "missing-constraint items.stock 0.8",
      "missing-constraint accounts.email 0.75",
    ]);
    expect(drafts[0]!.summary).toMatch(/rolled back/);
    // Every trial was rolled back: the data is exactly as it was.
    expect(await counts()).toEqual(before);
  }, 30_000);

  it("an external target that does not allow writes gets no trial at all, not even a rolled-back one", async () => {
    const context = fakeRunContext({
      target: target({ mode: "external", base_url: "http://127.0.0.1:9", allow_writes: false }),
    });
    const confirmed = await callTool(tool("confirm_constraint"), {}, context);
    expect(confirmed.ok).toBe(true);
    const data = (
      confirmed as {
        data: { candidates: unknown[]; stats: { notes: string[]; outcomes: Array<{ result: string }> } };
      }
    ).data;
    expect(data.candidates).toEqual([]);
    expect(data.stats.notes.join(" ")).toMatch(/not even rolled back/);
    expect(new Set(data.stats.outcomes.map((outcome) => outcome.result))).toEqual(new Set(["unconfirmed"]));
  });

  it("explains with the generic plan: a filter no index covers scans, an indexed one does not", async () => {
    const context = fakeRunContext({ target: target() });
    const scan = await callTool(
      tool("explain_query"),
      { sql: "SELECT id FROM holds WHERE status = $1" },
      context,
    );
    expect(scan).toMatchObject({
      ok: true,
      data: { scans: [{ table: "holds", unindexedColumns: ["status"] }] },
    });
    const indexed = await callTool(
      tool("explain_query"),
      { sql: "SELECT id FROM accounts WHERE email = 'a@example.test'" },
      context,
    );
    expect(indexed).toMatchObject({ ok: true, data: { scans: [] } });
  });
});
