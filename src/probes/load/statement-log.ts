import fs from "node:fs";
import path from "node:path";
import type { ToolContext } from "../../tools/context.ts";
import { isControlStatement, normalizeStatement } from "../code-access/sql-tokens.ts";

// The target's statement log (profile.database.statement_log): the engine starts the target with the
// log's environment set, and the target appends every SQL statement it runs to one file, one per line.
// A request's statements are the bytes appended between a mark taken before it and one taken after.

export interface StatementWindow {
  /** Every statement in the window, as logged. */
  statements: string[];
  /** Queries only (transaction control and PRAGMAs left out). */
  queries: string[];
  /** Normalised shape → how many times it ran. */
  shapes: Map<string, number>;
}

export class StatementLog {
  constructor(
    readonly file: string,
    readonly relative: string,
  ) {}

  /** The current end of the log (0 when it does not exist yet). */
  mark(): number {
    try {
      return fs.statSync(this.file).size;
    } catch {
      return 0;
    }
  }

  /** Statements appended since `from`; a log truncated since then is read from its start. */
  since(from: number): StatementWindow {
    let end: number;
    try {
      end = fs.statSync(this.file).size;
    } catch {
      return windowOf([]);
    }
    const start = end < from ? 0 : from;
    if (end === start) return windowOf([]);
    const handle = fs.openSync(this.file, "r");
    try {
      const buffer = Buffer.alloc(end - start);
      fs.readSync(handle, buffer, 0, buffer.length, start);
      return windowOf(buffer.toString("utf8").split("\n"));
    } finally {
      fs.closeSync(handle);
    }
  }

  /** The last `count` statements of the log. */
  tail(count: number): string[] {
    const end = this.mark();
    const from = Math.max(0, end - 256 * 1024);
    return this.since(from).statements.slice(-count);
  }

  /** Readings whose log grew after the action had answered, and readings in all (see `around`). */
  private readings = { late: 0, total: 0 };

  /**
   * Runs `action` and answers the statements it caused. An app may write its log after it answers (a
   * buffered stream, a busy machine): the log counts as settled once it has not grown for a quiet spell,
   * waiting at most `settleMs` in all. The spell is learned: 80 ms until the log has been seen complete at
   * the moment of the answer ten times in a row with nothing after, then 20 ms (the app logs before it
   * answers); a single late line puts it back to 80 ms for good. Most measurements are a few requests
   * each, and the spell is most of what one costs.
   */
  async around<Result>(
    action: () => Promise<Result>,
    options: { quietMs?: number; settleMs?: number } = {},
  ): Promise<{ result: Result; window: StatementWindow }> {
    const quietMs = options.quietMs ?? this.settleSpellMs;
    const start = this.mark();
    const result = await action();
    const answered = this.mark();
    const deadline = Date.now() + (options.settleMs ?? 1000);
    let size = answered;
    let quietSince = Date.now();
    while (Date.now() - quietSince < quietMs && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const next = this.mark();
      if (next !== size) [size, quietSince] = [next, Date.now()];
    }
    this.readings.total += 1;
    if (size !== answered) this.readings.late += 1;
    return { result, window: this.since(start) };
  }

  /** The quiet spell `around` waits for after an answer, as learned so far. */
  get settleSpellMs(): number {
    return this.readings.late === 0 && this.readings.total >= 10 ? 20 : 80;
  }
}

export function windowOf(lines: string[]): StatementWindow {
  const statements = lines.flatMap((line) => statementIn(line) ?? []);
  const queries = statements.filter((statement) => !isControlStatement(statement));
  const shapes = new Map<string, number>();
  for (const query of queries) {
    const shape = normalizeStatement(query);
    shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
  }
  return { statements, queries, shapes };
}

const SQL_VERB =
  /\b(SELECT|INSERT|UPDATE|DELETE|WITH|BEGIN|START|COMMIT|END|ROLLBACK|ABORT|SAVEPOINT|RELEASE|PRAGMA|REPLACE|CREATE|ALTER|DROP|TRUNCATE|SET|SHOW|EXPLAIN|ANALYZE|VACUUM|MERGE|CALL|LOCK|COPY|PREPARE|EXECUTE|DEALLOCATE)\b/;

/**
 * The statement a log line holds: the line itself, or what follows a log prefix (`SQL: `, `INFO
 * sqlalchemy.engine.Engine `, `[2026-12-07 10:00:01] db: `), so that an app's ordinary log can serve; a line
 * with no statement (an access log, a message) is none.
 */
export function statementIn(line: string): string | undefined {
  const text = line.trim();
  const first = /^\(?\s*([A-Za-z]+)/.exec(text)?.[1];
  if (first && SQL_VERB.test(first.toUpperCase())) return text;
  const found = SQL_VERB.exec(text);
  if (!found) return undefined;
  // A prefix ends where a log line's fields do (`:`, `]`, `)`, `-`, `|`, `>`, or a logger's dotted name).
  return /([:\])|>-]|\.\w+)\s+$/.test(text.slice(0, found.index)) ? text.slice(found.index) : undefined;
}

/**
 * The target's statement log, or why there is none. One per agent of a run, so what it learns about the
 * app's logging is kept from tool to tool, and one agent's readings amid other agents' traffic (a late
 * line that was someone else's) do not cost another agent that reads in measurement windows.
 */
export function statementLogOf(context: ToolContext): StatementLog | string {
  const log = context.target?.profile.database?.statement_log;
  if (!log) {
    return "the target profile has no database.statement_log: queries per request cannot be counted (add one: the env var that makes the app log its SQL, and the file it writes)";
  }
  const root = context.target?.root;
  if (!root) return "the target has no source root to find its statement log under";
  const file = path.resolve(root, log.file);
  const key = `load:statement-log:${context.agent.name}:${file}`;
  let shared = context.shared.get(key) as StatementLog | undefined;
  if (!shared) {
    shared = new StatementLog(file, log.file);
    context.shared.set(key, shared);
  }
  return shared;
}
