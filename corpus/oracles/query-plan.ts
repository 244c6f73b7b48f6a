import path from "node:path";
import Database from "better-sqlite3";
import type { OracleClient } from "./oracle.ts";

// The SQLite corpus servers' database as a file: with CORPUS_SQLITE_FILE set (the profiles set it, and
// name the same file as database.path) a server keeps its database there instead of in memory, so a reader
// outside the process can ask how a statement would run. The unindexed-query oracles do exactly that.

export const SQLITE_FILE_VARIABLE = "CORPUS_SQLITE_FILE";
/** Relative to the server's folder (the profile's source root). */
export const SQLITE_FILE = "var/corpus.db";

/** SQLite's plan of one logged statement (its placeholders bound to NULL, which plans like a value). */
export function sqlitePlan(client: OracleClient, statement: string): string[] {
  const file = path.join(client.corpusRoot, "servers", client.server.name, SQLITE_FILE);
  const database = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = database.prepare(`EXPLAIN QUERY PLAN ${statement.replace(/\?/g, "NULL")}`).all() as Array<{
      detail: string;
    }>;
    return rows.map((row) => row.detail);
  } finally {
    database.close();
  }
}

/** Rows in a table of the live SQLite database. */
export function sqliteRows(client: OracleClient, table: string): number {
  const file = path.join(client.corpusRoot, "servers", client.server.name, SQLITE_FILE);
  const database = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return Number((database.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n);
  } finally {
    database.close();
  }
}
