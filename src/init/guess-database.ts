import fs from "node:fs";
import path from "node:path";
import { dependencyNames, lineAt, type Repository, readRepository } from "./repository.ts";

// Which database the application uses and where, read from its code: a SQLite file it names (a path
// literal, a `sqlite:///` URL) when it depends on a SQLite driver, else the environment variable holding
// a PostgreSQL URL. Credentials are never read: a URL is only ever named by its variable.

export interface DatabaseGuess {
  kind: "sqlite" | "postgres";
  /** SQLite: the file, relative to the repository root. */
  path?: string;
  /** PostgreSQL: the variable holding the URL. */
  url_env?: string;
  /** `file:line` that says so. */
  in: string;
}

const SQLITE_PACKAGES = [
  "better-sqlite3",
  "sqlite3",
  "sqlite",
  "@libsql/client",
  "sql.js",
  "sqlalchemy",
  "flask-sqlalchemy",
  "django",
  "aiosqlite",
  "peewee",
  "sqlmodel",
  "tortoise-orm",
  "typeorm",
  "sequelize",
  "knex",
  "prisma",
  "drizzle-orm",
];
const POSTGRES_PACKAGES = [
  "pg",
  "pg-promise",
  "postgres",
  "@neondatabase/serverless",
  "psycopg2",
  "psycopg2-binary",
  "psycopg",
  "asyncpg",
  "pg8000",
];
const SQLITE_FILE = /["'`](?:sqlite:\/\/\/)?([^"'`\s]*?[\w-]+\.(?:db|sqlite3?))["'`]/g;
const SQLITE_URL = /sqlite:\/\/\/([^"'`\s]+?\.(?:db|sqlite3?))\b/g;
/** `process.env.DATABASE_URL`, `os.environ["DATABASE_URL"]`, `getenv("PG_URL")`, `env("DATABASE_URL")`. */
const URL_VARIABLE =
  /(?:process\.env\.|environ(?:\.get\(|\[)\s*["']|getenv\(\s*["']|env\(\s*["'])([A-Z0-9_]*(?:DATABASE_URL|DB_URL|DATABASE_URI|POSTGRES_URL|PG_URL|PG_DSN|POSTGRES_DSN|DATABASE_DSN))\b/;
const POSTGRES_LITERAL = /["'`]postgres(?:ql)?(?:\+\w+)?:\/\//;
/** Folder literals a data file is usually joined to: `path.join(ROOT, "data")`. */
const DATA_FOLDER = /(?:join|resolve)\([^()]*["'`](data|db|database|var|storage|instance|tmp)["'`]\s*\)/;

/** The seam `qaas doctor` takes for a database its profile does not name (see capabilities). */
export function findDatabaseInSource(
  root: string,
  options: { exclude?: string[] } = {},
): DatabaseGuess | undefined {
  return guessDatabase(readRepository(root, options));
}

export function guessDatabase(repository: Repository): DatabaseGuess | undefined {
  const dependencies = dependencyNames(repository);
  const usesSqlite =
    SQLITE_PACKAGES.some((name) => dependencies.has(name)) || mentions(repository, /sqlite/i);
  const usesPostgres =
    POSTGRES_PACKAGES.some((name) => dependencies.has(name)) || mentions(repository, POSTGRES_LITERAL);
  const variable = findFirst(repository, URL_VARIABLE);
  const sqlite = usesSqlite ? sqliteFile(repository) : undefined;
  if (usesPostgres && variable) return { kind: "postgres", url_env: variable.match[1], in: variable.at };
  if (sqlite) return sqlite;
  if (usesPostgres) {
    const literal = findFirst(repository, POSTGRES_LITERAL);
    return { kind: "postgres", url_env: "DATABASE_URL", in: literal?.at ?? "a PostgreSQL driver dependency" };
  }
  return undefined;
}

/** The first SQLite file literal, made relative to the root, preferring one whose file already exists. */
function sqliteFile(repository: Repository): DatabaseGuess | undefined {
  const found: Array<{ path: string; at: string; exists: boolean }> = [];
  for (const file of repository.codeFiles) {
    const text = repository.read(file);
    for (const pattern of [SQLITE_URL, SQLITE_FILE]) {
      for (const match of text.matchAll(pattern)) {
        const literal = match[1] ?? "";
        const relative = relativeDataFile(literal, text, match.index ?? 0);
        if (!relative) continue;
        found.push({
          path: relative,
          at: `${file}:${lineAt(text, match.index ?? 0)}`,
          exists: fileExists(repository.root, relative),
        });
      }
    }
  }
  const best = found.find((entry) => entry.exists) ?? found[0];
  return best ? { kind: "sqlite", path: best.path, in: best.at } : undefined;
}

/**
 * A literal as a path under the root: interpolations (`{os.getcwd()}/`, `${dir}/`) dropped, a bare name put
 * in the data folder the same file joins (`path.join(ROOT, "data")`), `:memory:` and absolute paths refused.
 */
function relativeDataFile(literal: string, text: string, index: number): string | undefined {
  const cleaned = literal.replace(/^(?:[^/]*[{}][^/]*\/)+/, "").replace(/^\.\//, "");
  if (cleaned === "" || cleaned.startsWith("/") || cleaned.includes(":memory:") || /[{}$]/.test(cleaned))
    return undefined;
  if (cleaned.includes("/")) return path.posix.normalize(cleaned).replace(/^(\.\.\/)+/, "");
  // `join(ROOT, "var", "app.db")`: the folder literals just before it in the same call.
  const leading = /((?:["'`][\w-]+["'`]\s*,\s*)+)$/.exec(text.slice(Math.max(0, index - 200), index))?.[1];
  const folders = leading ? [...leading.matchAll(/["'`]([\w-]+)["'`]/g)].map((match) => match[1]) : [];
  if (folders.length > 0) return [...folders, cleaned].join("/");
  const folder = DATA_FOLDER.exec(text)?.[1];
  return folder ? `${folder}/${cleaned}` : cleaned;
}

function mentions(repository: Repository, pattern: RegExp): boolean {
  return repository.codeFiles.some((file) => pattern.test(repository.read(file)));
}

function findFirst(
  repository: Repository,
  pattern: RegExp,
): { match: RegExpExecArray; at: string } | undefined {
  for (const file of repository.codeFiles) {
    const text = repository.read(file);
    const match = pattern.exec(text);
    if (match) return { match, at: `${file}:${lineAt(text, match.index)}` };
  }
  return undefined;
}

function fileExists(root: string, relative: string): boolean {
  try {
    return fs.statSync(path.join(root, relative)).isFile();
  } catch {
    return false;
  }
}
