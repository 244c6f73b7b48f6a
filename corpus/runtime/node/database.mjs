// The corpus servers' database: one interface over SQLite and PostgreSQL, the statement log, the shared
// schema and the seed. Copied next to each generated app as lib/database.mjs; lib/support.mjs re-exports it.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
// A cycle with support.mjs, safe because hashPassword is only called once both have loaded.
import { hashPassword } from "./support.mjs";

const HERE = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/**
 * The statement log a profile's `database.statement_log` names: with CORPUS_SQL_LOG set (a path relative to
 * the server folder), every statement the app sends is appended to that file, one line each, before it
 * runs. Written synchronously so a reader that marks the file around a request sees all of that request's
 * statements once the answer arrives.
 */
function statementLogger() {
  const target = process.env.CORPUS_SQL_LOG;
  if (!target) return () => {};
  const file = path.resolve(HERE, target);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, "a");
  return (sql) => fs.writeSync(fd, `${String(sql).replace(/\s+/g, " ").trim()}\n`);
}

/**
 * In memory, or with CORPUS_SQLITE_FILE set (relative to the server folder; a profile's database.path) a
 * fresh file, so that a tool reading the database (query plans, the schema) sees the live one.
 */
function sqliteTarget() {
  const target = process.env.CORPUS_SQLITE_FILE;
  if (!target) return ":memory:";
  const file = path.resolve(HERE, target);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(`${file}${suffix}`, { force: true });
  return file;
}

/** One interface over SQLite and PostgreSQL: all/get/run with the dialect's own placeholders. */
export async function openDatabase(kind, schema) {
  const log = statementLogger();
  if (kind === "sqlite") {
    const sqlite = new Database(sqliteTarget());
    // A file only so that a reader outside the process (qaas's query plans) can open it: durability is moot.
    if (process.env.CORPUS_SQLITE_FILE) sqlite.pragma("journal_mode = WAL");
    // Declared foreign keys are enforced, as PostgreSQL does (SQLite leaves them off per connection).
    sqlite.pragma("foreign_keys = ON");
    if (process.env.CORPUS_SQLITE_FILE) sqlite.pragma("synchronous = OFF");
    return {
      kind,
      async all(sql, params = []) {
        log(sql);
        return sqlite.prepare(sql).all(...params);
      },
      async get(sql, params = []) {
        log(sql);
        return sqlite.prepare(sql).get(...params);
      },
      async run(sql, params = []) {
        log(sql);
        return { changes: sqlite.prepare(sql).run(...params).changes };
      },
      async exec(sql) {
        log(sql);
        sqlite.exec(sql);
      },
      async close() {
        sqlite.close();
      },
    };
  }
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("DATABASE_URL is not set: this server needs a PostgreSQL server");
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: url, max: 8, options: `-c search_path=${schema}` });
  const query = (sql, params) => {
    log(sql);
    return pool.query(sql, params);
  };
  return {
    kind,
    async all(sql, params = []) {
      return (await query(sql, params)).rows;
    },
    async get(sql, params = []) {
      return (await query(sql, params)).rows[0];
    },
    async run(sql, params = []) {
      return { changes: (await query(sql, params)).rowCount };
    },
    async exec(sql) {
      await query(sql);
    },
    async close() {
      await pool.end();
    },
  };
}

/** The schema every server shares; the variants read and write these tables. */
export function schemaSql(kind) {
  const key = kind === "sqlite" ? "INTEGER PRIMARY KEY" : "SERIAL PRIMARY KEY";
  return `
    DROP TABLE IF EXISTS events; DROP TABLE IF EXISTS tags; DROP TABLE IF EXISTS labels; DROP TABLE IF EXISTS products; DROP TABLE IF EXISTS records;
    DROP TABLE IF EXISTS users; DROP TABLE IF EXISTS orgs;
    CREATE TABLE orgs (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE users (id ${key}, email TEXT UNIQUE NOT NULL, name TEXT NOT NULL, role TEXT NOT NULL,
      org_id INTEGER NOT NULL, password_hash TEXT NOT NULL, api_key TEXT UNIQUE, created_at TEXT NOT NULL);
    CREATE TABLE records (id ${key}, uid TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, owner_id INTEGER NOT NULL,
      org_id INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL DEFAULT '', status TEXT NOT NULL DEFAULT 'open',
      role TEXT NOT NULL DEFAULT 'viewer', price INTEGER NOT NULL DEFAULT 0, quantity INTEGER NOT NULL DEFAULT 1,
      attrs TEXT NOT NULL DEFAULT '{}', views INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL);
    CREATE TABLE products (id ${key}, sku TEXT NOT NULL, name TEXT NOT NULL, category TEXT NOT NULL,
      region TEXT NOT NULL, price INTEGER NOT NULL, stock INTEGER NOT NULL);
    CREATE TABLE labels (id ${key}, kind TEXT NOT NULL, name TEXT NOT NULL CHECK (length(name) <= 40),
      created_at TEXT NOT NULL);
    CREATE TABLE tags (id ${key}, record_id INTEGER NOT NULL, name TEXT NOT NULL);
    CREATE INDEX records_kind_owner ON records (kind, owner_id);
    CREATE INDEX tags_record ON tags (record_id);
    CREATE TABLE events (id ${key}, kind TEXT NOT NULL, reference TEXT NOT NULL, code TEXT NOT NULL,
      sku TEXT NOT NULL, city TEXT NOT NULL, amount INTEGER NOT NULL, created_at TEXT NOT NULL);
    CREATE INDEX events_code ON events (code);
    CREATE INDEX events_sku ON events (sku);
  `;
}

/** The variants' own tables: dropped (newest first) and made anew, so a reset starts them empty. */
export function variantTablesSql(kind, tables) {
  const key = kind === "sqlite" ? "INTEGER PRIMARY KEY" : "SERIAL PRIMARY KEY";
  const drops = [...tables].reverse().map((table) => `DROP TABLE IF EXISTS ${table.name};`);
  return [...drops, ...tables.map((table) => table.ddl.replaceAll("{key}", key))].join("\n");
}

/**
 * The activity log the lookup variants search: thousands of rows, indexed on code and sku only. One
 * statement in both dialects (a recursive count), so a reset stays quick.
 */
export function eventsSql() {
  return `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
    INSERT INTO events (kind, reference, code, sku, city, amount, created_at)
    SELECT CASE WHEN i - i / 3 * 3 = 0 THEN 'delivery' ELSE 'pickup' END, 'REF-' || CAST(100000 + i AS TEXT),
      'C-' || CAST(i AS TEXT), 'SKU-' || CAST(100 + i - i / 8 * 8 AS TEXT),
      CASE i - i / 5 * 5 WHEN 0 THEN 'Lisbon' WHEN 1 THEN 'Porto' WHEN 2 THEN 'Braga' WHEN 3 THEN 'Faro' ELSE 'Evora' END,
      i * 37 - i * 37 / 1000 * 1000, '2026-01-01T00:00:00Z'
    FROM n`;
}

const PRODUCTS = [
  ["SKU-100", "anchor bolt", "hardware", "eu", 120, 40],
  ["SKU-101", "brass hinge", "hardware", "us", 340, 12],
  ["SKU-102", "cedar plank", "timber", "eu", 990, 7],
  ["SKU-103", "copper wire", "electrical", "apac", 560, 0],
  ["SKU-104", "dowel pin", "hardware", "us", 15, 300],
  ["SKU-105", "oak beam", "timber", "apac", 4200, 3],
  ["SKU-106", "wall plug", "electrical", "eu", 45, 88],
  ["SKU-107", "zinc bracket", "hardware", "us", 230, 19],
];

/** Seeds people (passwords from the environment), products and each variant's records. */
export async function seed(db, placeholders, { people, records, tables = [], secondOwnsData }) {
  const p = placeholders;
  await db.exec(schemaSql(db.kind));
  if (tables.length > 0) await db.exec(variantTablesSql(db.kind, tables));
  await db.run(`INSERT INTO orgs (id, name) VALUES (1, 'Northwind'), (2, 'Southpaw')`);
  for (const person of people) {
    const password = requiredEnv(`CORPUS_${person.key.toUpperCase()}_PASSWORD`);
    const apiKey = process.env[`CORPUS_${person.key.toUpperCase()}_API_KEY`] ?? null;
    await db.run(
      `INSERT INTO users (email, name, role, org_id, password_hash, api_key, created_at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)})`,
      [
        person.email,
        person.name,
        person.role,
        person.org,
        hashPassword(password),
        apiKey,
        "2026-01-05T09:00:00Z",
      ],
    );
  }
  for (const product of PRODUCTS) {
    await db.run(
      `INSERT INTO products (sku, name, category, region, price, stock) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)})`,
      product,
    );
  }
  await db.run(eventsSql());
  const users = await db.all("SELECT id, email, org_id FROM users ORDER BY id");
  const byKey = Object.fromEntries(people.map((person, index) => [person.key, users[index]]));
  // Rows go in fifty to a statement: the performance variants seed hundreds per owner, and one round trip
  // each would slow a PostgreSQL server's start and every reset.
  const rows = [];
  const tagged = [];
  let counter = 0;
  for (const record of records) {
    if (record.tags) tagged.push(record);
    const owners = record.owners ?? ["alice", "bruno"];
    for (const key of owners) {
      if (key === "bruno" && !secondOwnsData) continue;
      const owner = byKey[key];
      for (let copy = 0; copy < (record.count ?? 2); copy += 1) {
        counter += 1;
        rows.push([
          stableUid(`${record.kind}:${key}:${copy}`),
          record.kind,
          owner.id,
          owner.org_id,
          `${record.title ?? "Entry"} ${counter}`,
          `${key}'s private note ${counter}`,
          "open",
          100 + counter,
          1 + (counter % 5),
          JSON.stringify(record.attrs ?? { colour: "teal", size: counter % 3 }),
          "2026-02-01T10:00:00Z",
        ]);
      }
    }
  }
  for (let start = 0; start < rows.length; start += 50) {
    const chunk = rows.slice(start, start + 50);
    const tuples = chunk.map(
      (_row, index) =>
        `(${Array.from({ length: 11 }, (_unused, column) => p(index * 11 + column + 1)).join(", ")})`,
    );
    await db.run(
      `INSERT INTO records (uid, kind, owner_id, org_id, title, body, status, price, quantity, attrs, created_at) VALUES ${tuples.join(", ")}`,
      chunk.flat(),
    );
  }
  for (const record of tagged) {
    for (let tag = 0; tag < record.tags; tag += 1) {
      await db.run(
        `INSERT INTO tags (record_id, name) SELECT id, CAST(${p(1)} AS TEXT) || CAST((id + ${tag}) - (id + ${tag}) / 7 * 7 AS TEXT) FROM records WHERE kind = ${p(2)}`,
        [`tag-${tag}-`, record.kind],
      );
    }
  }
}

export function stableUid(text) {
  const hex = crypto.createHash("sha256").update(text).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function requiredEnv(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (see corpus/targets/corpus.secrets.env)`);
  return value;
}
