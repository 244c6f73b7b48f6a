import path from "node:path";
import Database from "better-sqlite3";
import type { Table } from "../../map/system-map.ts";
import { listSourceFiles, type SourceTreeOptions } from "../routes/source-tree.ts";
import { readTreeFile } from "../source/walk-files.ts";
import { schemaOfDatabase } from "./read-sqlite-schema.ts";

// The schema a target declares in its source, for when its database cannot be read (a PostgreSQL server
// qaas has no URL for, a schema nobody can name): the CREATE TABLE / CREATE INDEX / ALTER TABLE … ADD
// statements of `.sql` files and migrations, and of the SQL strings in code (knex.raw, `db.exec(\`…\`)`,
// Python triple-quoted scripts, a JSON list of DDL). Each statement is replayed into an empty in-memory
// SQLite database — SQLite accepts most type names, so PostgreSQL DDL mostly loads as written — and the
// schema is then read from it like any SQLite file's. What the DDL does not declare is not there, so a
// missing constraint reads as missing; a statement SQLite cannot parse is skipped, never guessed.

const EXTENSIONS = new Set([
  ".sql",
  ".js",
  ".mjs",
  ".cjs",
  ".ts",
  ".mts",
  ".py",
  ".rb",
  ".go",
  ".java",
  ".kt",
]);
const DDL = /\b(CREATE\s+(?:UNIQUE\s+)?INDEX|CREATE\s+TABLE|ALTER\s+TABLE)\b/i;
const MAX_FILE_BYTES = 512 * 1024;

export interface SourceSchema {
  tables: Table[];
  /** Files the statements came from, relative to the root. */
  files: string[];
  /** Statements found and how many of them loaded. */
  statements: number;
  loaded: number;
}

/** The tables the source declares, or an empty list when it declares none. */
export function readSchemaFromSource(root: string, options: SourceTreeOptions = {}): SourceSchema {
  const files = listSourceFiles(root, EXTENSIONS, { ...options, maxFileBytes: MAX_FILE_BYTES }).files;
  const creates: string[] = [];
  const later: string[] = [];
  const from = new Set<string>();
  for (const file of files) {
    const text = readTreeFile(root, file);
    if (text === undefined || !DDL.test(text)) continue;
    const chunks =
      path.extname(file) === ".sql" ? [text] : stringLiterals(text).filter((chunk) => DDL.test(chunk));
    for (const chunk of chunks) {
      for (const statement of ddlStatements(chunk)) {
        from.add(file);
        (/^CREATE\s+TABLE/i.test(statement) ? creates : later).push(statement);
      }
    }
  }
  if (creates.length === 0) return { tables: [], files: [], statements: 0, loaded: 0 };
  const database = new Database(":memory:");
  let loaded = 0;
  try {
    // Tables before indexes and alterations: a migration may index a table another file creates.
    for (const statement of [...creates, ...later]) {
      try {
        database.exec(statement);
        loaded += 1;
      } catch {
        // Another dialect's syntax, a table declared twice (the first declaration stands): skipped.
      }
    }
    return {
      tables: schemaOfDatabase(database),
      files: [...from].sort(),
      statements: creates.length + later.length,
      loaded,
    };
  } finally {
    database.close();
  }
}

/**
 * The string literals of a source file (JavaScript, TypeScript, Python, Ruby and the like): quoted, template
 * and triple-quoted strings, unescaped. Comments are not parsed; a quote inside one at worst yields a junk
 * literal, which holds no DDL.
 */
export function stringLiterals(text: string): string[] {
  const literals: string[] = [];
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    const triple = text.startsWith('"""', index) || text.startsWith("'''", index);
    if (!triple && char !== '"' && char !== "'" && char !== "`") {
      index += 1;
      continue;
    }
    const quote = triple ? text.slice(index, index + 3) : char;
    let end = index + quote.length;
    let body = "";
    while (end < text.length && !text.startsWith(quote, end)) {
      if (text[end] === "\\" && end + 1 < text.length) {
        body += text.slice(end, end + 2);
        end += 2;
        continue;
      }
      // A single-quoted string does not span lines; one that seems to is a stray apostrophe.
      if (quote.length === 1 && quote !== "`" && text[end] === "\n") break;
      body += text[end];
      end += 1;
    }
    if (end >= text.length || !text.startsWith(quote, end)) {
      index += 1;
      continue;
    }
    literals.push(undoEscapes(body));
    index = end + quote.length;
  }
  return literals;
}

/** Backslash escapes undone, repeatedly, so SQL kept in JSON inside a string literal reads as SQL. */
function undoEscapes(body: string): string {
  let current = body;
  for (let round = 0; round < 3 && current.includes("\\"); round += 1) {
    current = current.replace(/\\(u[0-9a-fA-F]{4}|[\s\S])/g, (_, sequence: string) => {
      if (sequence.startsWith("u") && sequence.length === 5)
        return String.fromCharCode(Number.parseInt(sequence.slice(1), 16));
      return { n: "\n", t: "\t", r: "\n" }[sequence] ?? sequence;
    });
  }
  return current;
}

/**
 * The DDL statements of a chunk of SQL (or of text around it), each starting at its keyword, with the
 * substitutions a template leaves (`${key}`, `{key}`, `%(key)s`) removed — a column whose type is
 * interpolated keeps its name and loses only its type — and the PostgreSQL spellings SQLite refuses
 * rewritten (`DEFAULT now()`, casts, identity columns, `IF NOT EXISTS` kept as is).
 */
export function ddlStatements(chunk: string): string[] {
  const withoutComments = chunk.replace(/--[^\n]*/g, " ").replace(/\/\*[\s\S]*?\*\//g, " ");
  const statements: string[] = [];
  for (const piece of withoutComments.split(";")) {
    const start = piece.search(DDL);
    if (start < 0) continue;
    let statement = piece.slice(start).trim();
    // A statement inside JSON or a concatenation ends where its parentheses close (and an index's WHERE).
    if (/^CREATE/i.test(statement)) statement = balanced(statement);
    if (!statement) continue;
    statement = statement
      // An interpolated type on a column named id is the dialect's key type (SERIAL / INTEGER PRIMARY KEY).
      .replace(/\bid\s+(\$\{[^}]*\}|%\(\w+\)s|\{\w+\})/gi, "id INTEGER PRIMARY KEY")
      .replace(/\$\{[^}]*\}|%\(\w+\)s|\{\w+\}/g, " ")
      .replace(
        /\bDEFAULT\s+(now|current_timestamp|gen_random_uuid|uuid_generate_v4)\s*\(\s*\)/gi,
        "DEFAULT CURRENT_TIMESTAMP",
      )
      .replace(/::\s*[A-Za-z_]\w*(\[\])?/g, "")
      .replace(/\bGENERATED\s+(ALWAYS|BY\s+DEFAULT)\s+AS\s+IDENTITY(\s*\([^)]*\))?/gi, "")
      .replace(/\bCREATE\s+(UNIQUE\s+)?INDEX\s+CONCURRENTLY\b/gi, "CREATE $1INDEX")
      .replace(/\bUSING\s+btree\b/gi, "");
    statements.push(statement);
  }
  return statements;
}

/** The statement up to where its parentheses balance (what follows is the surrounding code or JSON). */
function balanced(statement: string): string {
  let depth = 0;
  let seen = false;
  for (let index = 0; index < statement.length; index += 1) {
    const char = statement[index];
    if (char === "(") {
      depth += 1;
      seen = true;
    } else if (char === ")") {
      depth -= 1;
      if (depth === 0 && seen) {
        const rest = statement.slice(index + 1).match(/^\s*(WHERE\s+[^"`]*)?/i)?.[0] ?? "";
        return (statement.slice(0, index + 1) + rest).trimEnd();
      }
      if (depth < 0) return "";
    }
  }
  return "";
}
