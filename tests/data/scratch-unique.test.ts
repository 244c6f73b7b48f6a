import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Table } from "../../src/map/system-map.ts";
import type { DataAssumption } from "../../src/probes/data/assumptions.ts";
import { scratchTrial } from "../../src/probes/data/scratch-trials.ts";
import { openScratch, type ScratchDatabase } from "../../src/probes/data/target-database.ts";

// A uniqueness the code assumes over a parent and a natural key (`club_id, registration`): the trial's two
// rows must name an existing parent, or the copy refuses them for the missing club and the key passes
// for enforced.

const column = (name: string, type: string, extra: Partial<Table["columns"][number]> = {}) => ({
  name,
  type,
  nullable: false,
  primary_key: false,
  ...extra,
});
const TABLES: Table[] = [
  {
    name: "clubs",
    columns: [column("id", "INTEGER", { primary_key: true }), column("name", "TEXT")],
    foreign_keys: [],
    indexes: [],
    checks: [],
  },
  {
    name: "boats",
    columns: [
      column("id", "INTEGER", { primary_key: true }),
      column("club_id", "INTEGER"),
      column("registration", "TEXT"),
    ],
    foreign_keys: [{ columns: ["club_id"], references_table: "clubs", references_columns: ["id"] }],
    indexes: [],
    checks: [],
  },
];

let folder: string;
let scratch: ScratchDatabase;

beforeAll(async () => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-unique-"));
  const file = path.join(folder, "app.db");
  const db = new Database(file);
  db.exec(`CREATE TABLE clubs (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE boats (id INTEGER PRIMARY KEY, club_id INTEGER NOT NULL REFERENCES clubs(id), registration TEXT NOT NULL);
    CREATE TABLE berths (id INTEGER PRIMARY KEY, club_id INTEGER NOT NULL REFERENCES clubs(id), code TEXT NOT NULL,
      UNIQUE (club_id, code));
    INSERT INTO clubs (id, name) VALUES (4, 'north'), (9, 'south');
    INSERT INTO boats (club_id, registration) VALUES (4, 'AB-1');
    INSERT INTO berths (club_id, code) VALUES (4, 'A1');`);
  db.close();
  scratch = await openScratch({ kind: "sqlite", file, relative: "app.db" });
});

afterAll(async () => {
  await scratch.close();
  fs.rmSync(folder, { recursive: true, force: true });
});

function unique(table: string, columns: string[]): DataAssumption {
  return {
    id: `unique:${table}.${columns.join(",")}`,
    kind: "unique",
    table,
    columns,
    enforced: false,
    sites: [],
    reason: "read as a single row",
  };
}

describe("a scratch trial of a uniqueness keyed by a parent", () => {
  it("stores two rows under an existing parent when nothing enforces the key", async () => {
    const trial = await scratchTrial(scratch, TABLES, unique("boats", ["club_id", "registration"]));
    expect(trial).toMatchObject({ accepted: true });
  });

  it("is refused by the unique constraint itself where there is one", async () => {
    const berths: Table = {
      ...TABLES[1]!,
      name: "berths",
      columns: [TABLES[1]!.columns[0]!, TABLES[1]!.columns[1]!, column("code", "TEXT")],
      indexes: [{ name: "berths_key", columns: ["club_id", "code"], unique: true }],
    };
    const trial = await scratchTrial(scratch, [...TABLES, berths], unique("berths", ["club_id", "code"]));
    expect(trial).toMatchObject({ accepted: false });
    expect((trial as { error?: string }).error).toMatch(/UNIQUE/i);
  });
});
