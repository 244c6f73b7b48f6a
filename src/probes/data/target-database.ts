import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { Table } from "../../map/system-map.ts";
import type { LoadedTarget, ToolContext } from "../../tools/context.ts";
import { type FoundDatabase, findDatabase } from "../schema/find-database.ts";
import { readPostgresSchema } from "../schema/read-postgres-schema.ts";
import { readSqliteSchema } from "../schema/read-sqlite-schema.ts";
import { readSchemaFromSource } from "../schema/source-ddl.ts";
import { secretVariableName } from "../session/secret-reference.ts";

// The target's database as the DBA and LOAD probes see it (the profile's, else the one its source shows):
// read-only on the live data, and a disposable copy (SQLite) or a rolled-back transaction (PostgreSQL, only
// where the target allows writes) for trials.

export type DatabaseHandle =
  | { kind: "sqlite"; file: string; relative: string }
  | { kind: "postgres"; url: string; variable: string };

/**
 * The database DBA and LOAD work on: the profile's `database` section when it has one, else the one the
 * target's source and configuration show (`findDatabase`). A PostgreSQL database is reachable only through
 * an environment variable qaas has: the profile's `secret_ref`, or the variable the source reads the URL
 * from. `found` says where the source showed it (for the map's `database.found`).
 */
export type EffectiveDatabase =
  | { kind: "sqlite"; path?: string; from: "profile" | "source"; found?: FoundDatabase }
  | { kind: "postgres"; variable?: string; from: "profile" | "source"; found?: FoundDatabase };

export function effectiveDatabase(
  target: LoadedTarget | undefined,
  cache?: Map<string, unknown>,
): EffectiveDatabase | undefined {
  const database = target?.profile.database;
  if (database?.kind === "sqlite") return { kind: "sqlite", path: database.path, from: "profile" };
  if (database?.kind === "postgres") {
    return {
      kind: "postgres",
      variable: database.url ? secretVariableName(database.url) : undefined,
      from: "profile",
    };
  }
  const root = target?.root;
  if (!root) return undefined;
  const key = `database:found:${root}`;
  let found = cache?.get(key) as FoundDatabase | null | undefined;
  if (found === undefined) {
    const exclude = target.goldenLedger ? [target.goldenLedger] : [];
    found = findDatabase(root, { exclude }) ?? null;
    cache?.set(key, found);
  }
  if (!found) return undefined;
  return found.kind === "sqlite"
    ? { kind: "sqlite", path: found.path, from: "source", found }
    : { kind: "postgres", variable: found.url_env, from: "source", found };
}

/** Where the database is, or why it cannot be reached. `sqlitePath` overrides it (target-relative). */
export function databaseOf(context: ToolContext, sqlitePath?: string): DatabaseHandle | string {
  const database = sqlitePath === undefined ? effectiveDatabase(context.target, context.shared) : undefined;
  const root = context.target?.root;
  const shownBy = database?.found ? ` (found in ${database.found.in})` : "";
  if (sqlitePath !== undefined || database?.kind === "sqlite") {
    const relative = sqlitePath ?? (database?.kind === "sqlite" ? database.path : undefined);
    if (!relative) return "database.kind is sqlite but database.path is missing from the target profile";
    const file = root ? path.resolve(root, relative) : path.resolve(relative);
    if (root && !isInside(root, file)) return `${relative} is outside the target's source root`;
    if (/^defects\.ya?ml$/i.test(path.basename(file)) || file === context.target?.goldenLedger) {
      return `${relative} is not readable by any agent`;
    }
    if (!fs.existsSync(file))
      return `SQLite file ${relative}${shownBy} does not exist (start or seed the target first)`;
    return { kind: "sqlite", file, relative };
  }
  if (database?.kind === "postgres") {
    const variable = database.variable;
    const url = variable ? process.env[variable] : undefined;
    if (!variable) {
      return database.from === "profile"
        ? "PostgreSQL URL not available: set database.url (secret_ref:NAME) in the target profile"
        : `a PostgreSQL URL is written in the source${shownBy}; qaas uses only one from its environment: set database.url (secret_ref:NAME) in the target profile`;
    }
    if (!url) return `PostgreSQL URL not available${shownBy}: set ${variable} in the environment`;
    return { kind: "postgres", url, variable };
  }
  return "the target profile has no database section and its source shows none";
}

function isInside(root: string, file: string): boolean {
  const relative = path.relative(path.resolve(root), file);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/** Where a schema was read: the live database, the pinned map, or the DDL in the target's source. */
export type SchemaSource = "database" | "system-map" | "source";

/**
 * The schema the live database enforces; when it cannot be read, the pinned map's tables, else the DDL
 * the source declares.
 */
export async function loadTables(
  context: ToolContext,
  handle: DatabaseHandle | string,
): Promise<{ tables: Table[]; source: SchemaSource; note?: string }> {
  if (typeof handle !== "string") {
    try {
      const tables =
        handle.kind === "sqlite" ? readSqliteSchema(handle.file) : await readPostgresSchema(handle.url);
      return { tables, source: "database" };
    } catch (error) {
      const tables = context.systemMap()?.database?.tables ?? [];
      return { tables, source: "system-map", note: `live schema not read (${(error as Error).message})` };
    }
  }
  const mapped = context.systemMap()?.database?.tables ?? [];
  const root = context.target?.root;
  if (mapped.length > 0 || !root) return { tables: mapped, source: "system-map", note: handle };
  // No database to read and no map of it: the DDL the source declares is the schema to compare with.
  const exclude = context.target?.goldenLedger ? [context.target.goldenLedger] : [];
  const declared = readSchemaFromSource(root, { exclude });
  if (declared.tables.length === 0) return { tables: [], source: "system-map", note: handle };
  return {
    tables: declared.tables,
    source: "source",
    note: `${handle}; schema read from the DDL in ${declared.files.slice(0, 5).join(", ")}${declared.files.length > 5 ? ", …" : ""}`,
  };
}

/** Runs read-only queries against the live database; answers undefined when it cannot be reached. */
export async function readOnly<Result>(
  handle: DatabaseHandle,
  body: (
    query: (sql: string, parameters?: unknown[]) => Promise<Record<string, unknown>[]>,
  ) => Promise<Result>,
): Promise<Result | undefined> {
  if (handle.kind === "sqlite") {
    let database: Database.Database | undefined;
    try {
      database = new Database(handle.file, { readonly: true, fileMustExist: true });
      database.pragma("busy_timeout = 2000");
      const connection = database;
      return await body(
        async (sql, parameters = []) =>
          connection.prepare(sql).all(...(parameters as never[])) as Record<string, unknown>[],
      );
    } catch {
      return undefined;
    } finally {
      database?.close();
    }
  }
  const client = new pg.Client({ connectionString: handle.url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("BEGIN READ ONLY");
    return await body(async (sql, parameters = []) => (await client.query(sql, parameters)).rows);
  } catch {
    return undefined;
  } finally {
    await client.query("ROLLBACK").catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/** A scratch database: what trials run against. Everything done to it is thrown away. */
export interface ScratchDatabase {
  kind: "sqlite" | "postgres";
  /** What the trials ran on, for evidence. */
  description: string;
  /** Runs one trial; a thrown error means the database refused it. Each trial is undone before the next. */
  trial(
    statements: Array<{ sql: string; parameters?: unknown[] }>,
  ): Promise<{ accepted: boolean; error?: string }>;
  query(sql: string, parameters?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/**
 * SQLite: a copy made with `VACUUM INTO` from a read-only connection (the live file is never opened for
 * writing). PostgreSQL: one connection whose every trial runs in a transaction that is rolled back, used
 * only when the caller has established that the target allows writes.
 */
export async function openScratch(handle: DatabaseHandle): Promise<ScratchDatabase> {
  if (handle.kind === "sqlite") return openSqliteScratch(handle);
  return openPostgresScratch(handle);
}

function openSqliteScratch(handle: Extract<DatabaseHandle, { kind: "sqlite" }>): ScratchDatabase {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-scratch-"));
  const copy = path.join(folder, "scratch.db");
  const source = new Database(handle.file, { readonly: true, fileMustExist: true });
  try {
    source.pragma("busy_timeout = 2000");
    source.prepare("VACUUM INTO ?").run(copy);
  } finally {
    source.close();
  }
  const database = new Database(copy);
  // The application's own connection setting decides enforcement; the copy enforces every declared key,
  // so an accepted orphan shows the key is missing, not merely switched off.
  database.pragma("foreign_keys = ON");
  return {
    kind: "sqlite",
    description: `a scratch copy of ${handle.relative} (VACUUM INTO from a read-only connection)`,
    async trial(statements) {
      database.exec("SAVEPOINT qaas_trial");
      try {
        for (const statement of statements)
          database.prepare(statement.sql).run(...((statement.parameters ?? []) as never[]));
        return { accepted: true };
      } catch (error) {
        return { accepted: false, error: (error as Error).message };
      } finally {
        database.exec("ROLLBACK TO qaas_trial");
        database.exec("RELEASE qaas_trial");
      }
    },
    async query(sql, parameters = []) {
      return database.prepare(sql).all(...(parameters as never[])) as Record<string, unknown>[];
    },
    async close() {
      database.close();
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function openPostgresScratch(
  handle: Extract<DatabaseHandle, { kind: "postgres" }>,
): Promise<ScratchDatabase> {
  const client = new pg.Client({ connectionString: handle.url, connectionTimeoutMillis: 5000 });
  await client.connect();
  await client.query("BEGIN");
  await client.query("SET LOCAL statement_timeout = 5000");
  return {
    kind: "postgres",
    description: `a PostgreSQL transaction that is rolled back (database from ${handle.variable})`,
    async trial(statements) {
      await client.query("SAVEPOINT qaas_trial");
      try {
        for (const statement of statements) await client.query(statement.sql, statement.parameters ?? []);
        return { accepted: true };
      } catch (error) {
        return { accepted: false, error: (error as Error).message };
      } finally {
        await client.query("ROLLBACK TO SAVEPOINT qaas_trial");
      }
    },
    async query(sql, parameters = []) {
      return (await client.query(sql, parameters)).rows;
    },
    async close() {
      await client.query("ROLLBACK").catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}

/** Double-quoted identifier, valid in SQLite and PostgreSQL. */
export function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
