import fs from "node:fs";
import path from "node:path";
import { listSourceFiles, type SourceTreeOptions } from "../routes/source-tree.ts";
import { readTreeFile } from "../source/walk-files.ts";
import { assignments, evaluate, firstArgument, propertyValue, restOfExpression } from "./path-expression.ts";

// The database a target uses, read from its source and configuration when the profile names none:
//   - SQLite files: `sqlite3.connect("x.db")`, `new Database("data/app.db")` (better-sqlite3, sqlite3),
//     `sqlite:///…` URLs (SQLAlchemy, Flask config, alembic.ini, .env), knex `filename`, Sequelize `storage`,
//     TypeORM `database`, Prisma `url = "file:./dev.db"`, Django `DATABASES` `NAME`;
//   - PostgreSQL URLs read from an environment variable (`process.env.DATABASE_URL`,
//     `os.environ["DATABASE_URL"]`, `os.getenv`, Prisma `env("…")`) in a project that uses PostgreSQL:
//     answered as `url_env`, never as a URL. A URL written in the source carries credentials nobody gave
//     qaas: it is reported (where it is) but never used.
// Paths are evaluated as far as the source allows (`os.path.join(basedir, "app.db")`, `__dirname`,
// `Path(__file__).parent.parent / "db.sqlite3"`, `f"{os.getcwd()}/x.db"`, names assigned in the same file)
// and answered relative to the source root; among candidates a file that exists wins.

export type FoundDatabase =
  | { kind: "sqlite"; path: string; in: string }
  | { kind: "postgres"; url_env?: string; in: string };

const EXTENSIONS = new Set([
  ".py",
  ".js",
  ".ts",
  ".mjs",
  ".cjs",
  ".mts",
  ".json",
  ".prisma",
  ".ini",
  ".yml",
  ".yaml",
  ".toml",
  ".cfg",
]);
const DB_FILE = /\.(db|sqlite|sqlite3|db3)$/i;
const SQLITE_EXTENSIONS = new Set([".db", ".sqlite", ".sqlite3", ".db3"]);
const SQLITE_DRIVER =
  /better-sqlite3|["']sqlite3?["']|\bimport sqlite3\b|\bsqlite3\.connect|aiosqlite|bun:sqlite|node:sqlite/;
/** Names of variables holding a whole connection URL (`DATABASE_URL`, `PG_CONNECTION_STRING`), not a host. */
const URL_VARIABLE =
  /(DATABASE|DB|POSTGRES|POSTGRESQL|PG)_?(URL|URI|DSN|CONNECTION_STRING|CONN_STRING|CONNECTION)$/;
const POSTGRES_PACKAGES =
  /["'](pg|pg-promise|postgres|pg-pool|@neondatabase\/serverless|@vercel\/postgres)["']\s*:|^\s*(psycopg2|psycopg|psycopg2-binary|asyncpg|pg8000)\b/im;

const MANIFESTS = ["package.json", "requirements.txt", "pyproject.toml", "Pipfile", "setup.py"];
const POSTGRES_IN_CODE =
  /postgres(ql)?(\+\w+)?:\/\/|provider\s*=\s*"postgresql"|django\.db\.backends\.postgresql|client:\s*["'](pg|postgres|postgresql)["']|dialect:\s*["']postgres["']|type:\s*["']postgres["']/;

interface Candidate {
  found: FoundDatabase;
  /** Higher is better: usable now, then explicit, then merely plausible. */
  rank: number;
}

/** The database the source uses, or undefined when it shows none. */
export function findDatabase(root: string, options: SourceTreeOptions = {}): FoundDatabase | undefined {
  return findDatabases(root, options)[0];
}

/** Every database the source shows, best first. */
export function findDatabases(root: string, options: SourceTreeOptions = {}): FoundDatabase[] {
  const files = listSourceFiles(root, EXTENSIONS, options).files.filter(
    (file) => !/(^|\/)package-lock\.json$/.test(file),
  );
  const texts = new Map<string, string>();
  for (const file of [...files, ".env"]) {
    const text = readTreeFile(root, file);
    if (text !== undefined && text.length < 512 * 1024) texts.set(file, text);
  }
  // PostgreSQL in the manifests or the code: only then is a URL variable taken for a PostgreSQL one.
  const usesPostgres =
    MANIFESTS.some((file) => POSTGRES_PACKAGES.test(readTreeFile(root, file) ?? "")) ||
    [...texts.values()].some((text) => POSTGRES_IN_CODE.test(text));
  const onDisk = listSourceFiles(root, SQLITE_EXTENSIONS, {
    ...options,
    maxFileBytes: Number.MAX_SAFE_INTEGER,
  }).files;
  const candidates: Candidate[] = [];
  for (const [file, text] of texts)
    candidates.push(...candidatesIn({ root, file, text, usesPostgres, onDisk }));
  const seen = new Set<string>();
  return candidates
    .sort((left, right) => right.rank - left.rank)
    .map((candidate) => candidate.found)
    .filter((found) => {
      const key = found.kind === "sqlite" ? `sqlite:${found.path}` : `postgres:${found.url_env ?? found.in}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

interface FileScan {
  root: string;
  file: string;
  text: string;
  usesPostgres: boolean;
  /** SQLite files present in the tree (relative paths). */
  onDisk: readonly string[];
}

function candidatesIn({ root, file, text, usesPostgres, onDisk }: FileScan): Candidate[] {
  const candidates: Candidate[] = [];
  const constants = assignments(text);
  const where = (index: number): string => `${file}:${text.slice(0, index).split("\n").length}`;
  const sqlite = (expression: string, index: number, explicit: boolean, extraBases: string[] = []): void => {
    const resolved = resolvePath({ root, file, onDisk }, expression, constants, extraBases);
    if (!resolved || resolved === ":memory:" || (!DB_FILE.test(resolved) && !explicit)) return;
    const exists = fs.existsSync(path.join(root, resolved));
    candidates.push({
      found: { kind: "sqlite", path: resolved, in: where(index) },
      rank: (exists ? 4 : 2) + (explicit ? 1 : 0),
    });
  };
  const postgresFromEnv = (variable: string, index: number): void => {
    if (!usesPostgres) return;
    candidates.push({
      found: { kind: "postgres", url_env: variable, in: where(index) },
      rank: process.env[variable] ? 6 : 1,
    });
  };
  const isComment = (index: number): boolean =>
    /^\s*(#|\/\/|\*|;)/.test(text.slice(text.lastIndexOf("\n", index) + 1, index));

  // sqlite:/// URLs in any string (SQLAlchemy, Flask, alembic.ini, .env). Flask-SQLAlchemy 3 reads a
  // relative one from the instance folder.
  for (const match of text.matchAll(/sqlite(?:\+\w+)?:\/\/\/([^\s'"`{}]*)/g)) {
    if (isComment(match.index)) continue;
    const literal = match[1]!;
    const expression = literal
      ? JSON.stringify(literal)
      : restOfExpression(text, match.index + match[0].length);
    sqlite(expression, match.index, true, ["instance"]);
  }
  // Prisma: `url = "file:./dev.db"` is relative to the schema file; so is a `file:` DATABASE_URL in .env.
  for (const match of text.matchAll(
    /\burl\s*=\s*"file:([^"]+)"|^\s*[A-Z_]*DATABASE_URL\s*=\s*["']?file:([^\s"']+)/gm,
  )) {
    if (isComment(match.index)) continue;
    const schemaFolder =
      match[1] !== undefined
        ? path.posix.dirname(file)
        : fs.existsSync(path.join(root, "prisma", "schema.prisma"))
          ? "prisma"
          : "";
    sqlite(JSON.stringify(path.posix.join(schemaFolder, match[1] ?? match[2]!)), match.index, true);
  }
  // Driver calls whose first argument is the file.
  for (const match of text.matchAll(
    /\bsqlite3\.connect\s*\(|\bnew\s+(?:sqlite3\.)?Database\s*\(|\baiosqlite\.connect\s*\(/g,
  )) {
    if (
      isComment(match.index) ||
      (match[0].includes("Database") && !/better-sqlite3|sqlite3|bun:sqlite/.test(text))
    )
      continue;
    const argument = firstArgument(text, match.index + match[0].length);
    if (argument) sqlite(argument, match.index, false);
  }
  // ORM settings next to a SQLite dialect: knex filename, Sequelize storage, TypeORM database, Django NAME.
  if (
    /client:\s*["'](sqlite3|better-sqlite3)["']|dialect:\s*["']sqlite["']|type:\s*["'](sqlite|better-sqlite3)["']|"dialect"\s*:\s*"sqlite"|django\.db\.backends\.sqlite3/.test(
      text,
    )
  ) {
    for (const match of text.matchAll(/["']?\b(filename|storage|database|NAME)["']?\s*[:=]\s*/g)) {
      if (isComment(match.index)) continue;
      const value = propertyValue(text, match.index + match[0].length);
      // knex `filename` and Sequelize `storage` name the file whatever it is called; `database` and
      // `NAME` name other things too (Django's password validators), so those need a SQLite extension.
      if (value && !/^process\.env|^env\(|^os\./.test(value))
        sqlite(value, match.index, match[1] === "filename" || match[1] === "storage");
    }
  }
  // A SQLite file name in a file that opens SQLite, built into a path elsewhere (`path.join(dataDir,
  // "app.db")`): only when that file exists in the tree.
  if (SQLITE_DRIVER.test(text)) {
    for (const match of text.matchAll(/["'`]([\w./-]+\.(?:db|sqlite|sqlite3|db3))["'`]/g)) {
      const name = match[1]!.replace(/^\.\//, "");
      const present = onDisk.find((candidate) => candidate === name || candidate.endsWith(`/${name}`));
      if (present && !isComment(match.index))
        candidates.push({ found: { kind: "sqlite", path: present, in: where(match.index) }, rank: 1.5 });
    }
  }
  // Connection URLs from the environment.
  for (const match of text.matchAll(
    /process\.env(?:\.([A-Z][A-Z0-9_]*)|\[\s*["']([A-Z][A-Z0-9_]*)["']\s*\])|os\.environ(?:\.get)?\s*[[(]\s*["']([A-Z][A-Z0-9_]*)["']|os\.getenv\s*\(\s*["']([A-Z][A-Z0-9_]*)["']|\benv\(\s*"([A-Z][A-Z0-9_]*)"\s*\)/g,
  )) {
    const variable = match[1] ?? match[2] ?? match[3] ?? match[4] ?? match[5]!;
    if (!isComment(match.index) && URL_VARIABLE.test(variable)) postgresFromEnv(variable, match.index);
  }
  // dj-database-url and django-environ read DATABASE_URL themselves.
  for (const match of text.matchAll(/dj_database_url\.(config|parse)\(|\benv\.db(_url)?\(\s*\)/g))
    postgresFromEnv("DATABASE_URL", match.index);
  // A PostgreSQL URL written out: where it is, not what it says.
  for (const match of text.matchAll(/["'`]postgres(?:ql)?(?:\+\w+)?:\/\//g)) {
    if (!isComment(match.index) && file !== ".env")
      candidates.push({ found: { kind: "postgres", in: where(match.index) }, rank: 0 });
  }
  return candidates;
}

/**
 * A path expression evaluated to a path relative to the root, or undefined when it has no literal part.
 * Unknown bases (a name imported from elsewhere) are resolved to whichever folder holds the file.
 */
function resolvePath(
  { root, file, onDisk }: Pick<FileScan, "root" | "file" | "onDisk">,
  expression: string,
  names: ReadonlyMap<string, string>,
  extraBases: readonly string[],
): string | undefined {
  const evaluated = evaluate(expression, names, 0);
  if (!evaluated?.tail) return undefined;
  if (evaluated.tail === ":memory:") return ":memory:";
  if (path.isAbsolute(evaluated.tail)) {
    const relative = path.relative(root, evaluated.tail);
    return relative.startsWith("..") ? undefined : relative.split(path.sep).join("/");
  }
  const folder = path.posix.dirname(file);
  const up = (levels: number): string => {
    let current = folder === "." ? "" : folder;
    for (let index = 0; index < levels; index += 1)
      current = current.includes("/") ? path.posix.dirname(current) : "";
    return current;
  };
  // A path relative to the working directory is most often relative to the root; an app run from its own
  // folder, or a framework's folder (Flask's instance/), also happens: an existing file decides.
  const bases =
    evaluated.base.from === "root"
      ? ["", ...extraBases, up(0)]
      : evaluated.base.from === "file"
        ? [up(evaluated.base.up)]
        : [up(0), up(1), up(2), ""];
  const join = (base: string) => path.posix.normalize(path.posix.join(base, evaluated.tail));
  const existing = bases.find((base) => fs.existsSync(path.join(root, join(base))));
  // A base the source hides (a folder computed elsewhere): a file of that name in the tree decides.
  const elsewhere =
    existing === undefined && evaluated.base.from === "unknown"
      ? onDisk.find((candidate) => candidate.endsWith(`/${evaluated.tail.replace(/^\.?\//, "")}`))
      : undefined;
  if (elsewhere) return elsewhere;
  const chosen = join(existing ?? bases[0]!);
  return chosen.startsWith("..") ? undefined : chosen;
}
