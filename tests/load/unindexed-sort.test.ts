import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainStatement } from "../../src/probes/load/query-plan.ts";
import { readPostgresSchema } from "../../src/probes/schema/read-postgres-schema.ts";
import { readSqliteSchema } from "../../src/probes/schema/read-sqlite-schema.ts";
import { type PostgresServer, startPostgres } from "../support/postgres-server.ts";

// A page ordered by a column no index starts with makes the database read and sort the whole table on
// every request; ordered by the key or an indexed column it reads the first rows in order and stops.

const SCHEMA = `CREATE TABLE events (id INTEGER PRIMARY KEY, code TEXT NOT NULL, amount INTEGER NOT NULL, city TEXT NOT NULL);
CREATE INDEX events_code ON events (code);`;
const PAGES = {
  amount: "SELECT id, code, amount FROM events ORDER BY amount DESC LIMIT 20",
  qualified: "SELECT e.id, e.amount FROM events e ORDER BY e.amount DESC LIMIT ?",
  code: "SELECT id, code, amount FROM events ORDER BY code LIMIT 20",
  key: "SELECT id, code, amount FROM events ORDER BY id DESC LIMIT 20",
  unpaged: "SELECT id, code, amount FROM events ORDER BY amount",
};

function sortsOf(result: Awaited<ReturnType<typeof explainStatement>>): string[] {
  return result.sorts.map((sort) => `${sort.table}.${sort.column}`);
}

describe("explainStatement finds pages sorted without an index", () => {
  let folder: string;
  let file: string;
  beforeAll(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-sort-"));
    file = path.join(folder, "app.db");
    const database = new Database(file);
    database.exec(SCHEMA);
    const insert = database.prepare("INSERT INTO events (code, amount, city) VALUES (?, ?, ?)");
    for (let index = 0; index < 1200; index += 1) insert.run(`C-${index}`, (index * 37) % 1000, "Porto");
    database.close();
  });
  afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

  it("on SQLite", async () => {
    const handle = { kind: "sqlite" as const, file, relative: "app.db" };
    const tables = readSqliteSchema(file);
    expect(sortsOf(await explainStatement(handle, tables, PAGES.amount))).toEqual(["events.amount"]);
    expect(sortsOf(await explainStatement(handle, tables, PAGES.qualified))).toEqual(["events.amount"]);
    for (const safe of [PAGES.code, PAGES.key, PAGES.unpaged])
      expect(sortsOf(await explainStatement(handle, tables, safe))).toEqual([]);
  });

  describe("on PostgreSQL", () => {
    let postgres: PostgresServer;
    beforeAll(async () => {
      postgres = await startPostgres();
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      await client.query(SCHEMA.replace("INTEGER PRIMARY KEY", "SERIAL PRIMARY KEY"));
      await client.query(
        "INSERT INTO events (code, amount, city) SELECT 'C-' || n, (n * 37) % 1000, 'Porto' FROM generate_series(1, 1200) AS n",
      );
      await client.query("ANALYZE events");
      await client.end();
    }, 60_000);
    afterAll(async () => {
      await postgres?.stop();
    });

    it("with sequential scans discouraged, a Sort over a Seq Scan", async () => {
      const handle = { kind: "postgres" as const, url: postgres.url, variable: "DATABASE_URL" };
      const tables = await readPostgresSchema(postgres.url);
      expect(sortsOf(await explainStatement(handle, tables, PAGES.amount))).toEqual(["events.amount"]);
      for (const safe of [PAGES.code, PAGES.key, PAGES.unpaged])
        expect(sortsOf(await explainStatement(handle, tables, safe))).toEqual([]);
    });
  });
});
