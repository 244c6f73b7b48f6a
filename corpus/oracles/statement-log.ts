import fs from "node:fs";
import path from "node:path";
import type { OracleClient } from "./oracle.ts";

// The corpus servers' statement log (the profiles' database.statement_log): with CORPUS_SQL_LOG set, a
// server appends every SQL statement it sends to this file under its own folder, one line each, before it
// runs it. The performance oracles count the lines one request adds; they run with nothing else in flight.

export const STATEMENT_LOG_VARIABLE = "CORPUS_SQL_LOG";
/** Relative to the server's folder (the profile's source root). */
export const STATEMENT_LOG_FILE = "var/sql.log";

function logFile(client: OracleClient): string {
  return path.join(client.corpusRoot, "servers", client.server.name, STATEMENT_LOG_FILE);
}

function size(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** The statements the server logged while `action` ran (it writes them synchronously, before answering). */
export async function statementsDuring<Result>(
  client: OracleClient,
  action: () => Promise<Result>,
): Promise<{ result: Result; statements: string[] }> {
  const file = logFile(client);
  const start = size(file);
  const result = await action();
  const end = size(file);
  if (end <= start) return { result, statements: [] };
  const buffer = Buffer.alloc(end - start);
  const handle = fs.openSync(file, "r");
  try {
    fs.readSync(handle, buffer, 0, buffer.length, start);
  } finally {
    fs.closeSync(handle);
  }
  const statements = buffer
    .toString("utf8")
    .split("\n")
    .filter((line) => line.trim().length > 0);
  return { result, statements };
}
