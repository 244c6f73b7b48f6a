import { appendFileSync } from "node:fs";
import Database from "better-sqlite3";

export type Db = Database.Database;

export interface OpenOptions {
  /** When set, every statement the connection runs is appended to this file, one per line. */
  sqlLogFile?: string | null;
}

export function openDatabase(file: string, options: OpenOptions = {}): Db {
  const logFile = options.sqlLogFile;
  const db = new Database(file, {
    verbose: logFile
      ? (message?: unknown) => appendFileSync(logFile, `${String(message).replace(/\s+/g, " ").trim()}\n`)
      : undefined,
  });
  db.pragma("journal_mode = WAL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 2000");
  return db;
}

export function rows<T>(db: Db, sql: string, ...params: unknown[]): T[] {
  return db.prepare(sql).all(...params) as T[];
}

export function isConstraintError(error: unknown, code: string): boolean {
  return error instanceof Database.SqliteError && error.code === code;
}

export function isSqlError(error: unknown): error is InstanceType<typeof Database.SqliteError> {
  return error instanceof Database.SqliteError;
}
