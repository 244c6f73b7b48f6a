import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { databaseOf, effectiveDatabase } from "../../src/probes/data/target-database.ts";
import { findDatabase, findDatabases } from "../../src/probes/schema/find-database.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import type { LoadedTarget } from "../../src/tools/context.ts";
import { dbTools } from "../../src/tools/servers/db-server.ts";
import { callTool, fakeRunContext, testAgent } from "../support/fake-run-context.ts";
import { writeTree } from "./write-tree.ts";

const tree = (files: Record<string, string>) => writeTree(files, "qaas-find-db-");

function createSqlite(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new Database(file);
  database.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total_cents INTEGER NOT NULL)");
  database.close();
}

describe("SQLite files in Node source and configuration", () => {
  it("reads better-sqlite3, knex, Sequelize and Prisma settings, each where it says", () => {
    expect(
      findDatabase(
        tree({
          "package.json": JSON.stringify({ dependencies: { "better-sqlite3": "12.11.1" } }),
          "src/db.js": `import Database from "better-sqlite3";\n// new Database("old.db") before the move\nexport const db = new Database("data/app.db", { fileMustExist: false });\n`,
        }),
      ),
    ).toEqual({ kind: "sqlite", path: "data/app.db", in: "src/db.js:3" });
    expect(
      findDatabase(
        tree({
          "db/knexfile.js": `const path = require("path");\nmodule.exports = {\n  client: "sqlite3",\n  connection: { filename: path.join(__dirname, "dev.sqlite3") },\n  useNullAsDefault: true,\n};\n`,
        }),
      ),
    ).toEqual({ kind: "sqlite", path: "db/dev.sqlite3", in: "db/knexfile.js:4" });
    expect(
      findDatabase(
        tree({
          "models/index.ts": `import { Sequelize } from "sequelize";\nexport const sequelize = new Sequelize({\n  dialect: "sqlite",\n  storage: "./storage/shop.sqlite",\n});\n`,
        }),
      ),
    ).toEqual({ kind: "sqlite", path: "storage/shop.sqlite", in: "models/index.ts:4" });
    expect(
      findDatabase(
        tree({
          "prisma/schema.prisma": `datasource db {\n  provider = "sqlite"\n  url      = "file:./dev.db"\n}\n`,
        }),
      ),
    ).toEqual({ kind: "sqlite", path: "prisma/dev.db", in: "prisma/schema.prisma:3" });
  });

  it("prefers a file that exists when a relative path could start from the root or the script's folder", () => {
    const root = tree({ "scripts/load.py": `import sqlite3\nconnection = sqlite3.connect("shop.db")\n` });
    expect(findDatabase(root)).toEqual({ kind: "sqlite", path: "shop.db", in: "scripts/load.py:2" });
    createSqlite(path.join(root, "scripts", "shop.db"));
    expect(findDatabase(root)).toEqual({ kind: "sqlite", path: "scripts/shop.db", in: "scripts/load.py:2" });
  });
});

describe("SQLite files in Python source and configuration", () => {
  it("evaluates Flask and SQLAlchemy URLs built with os.path.join, f-strings and names of the same file", () => {
    expect(
      findDatabase(
        tree({
          "app/config.py": `import os\n\nbasedir = os.path.abspath(os.path.dirname(__file__))\n\n\nclass Config:\n    SQLALCHEMY_DATABASE_URI = os.environ.get("DATABASE_URL") or "sqlite:///" + os.path.join(basedir, "app.db")\n`,
        }),
      ),
    ).toEqual({ kind: "sqlite", path: "app/app.db", in: "app/config.py:7" });
    expect(
      findDatabase(
        tree({
          "config.py": `import os\n\nDB_FILE = f"{os.getcwd()}/data/blog.db"\nSQLALCHEMY_DATABASE_URI = f"sqlite:///{DB_FILE}"\n`,
        }),
      ),
    ).toEqual({ kind: "sqlite", path: "data/blog.db", in: "config.py:4" });
    expect(
      findDatabase(tree({ "alembic.ini": `[alembic]\nsqlalchemy.url = sqlite:///var/app.sqlite\n` })),
    ).toEqual({ kind: "sqlite", path: "var/app.sqlite", in: "alembic.ini:2" });
  });

  it("reads Django's DATABASES NAME relative to BASE_DIR, and not the password validators' NAMEs", () => {
    const root = tree({
      "mysite/settings.py": `from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": BASE_DIR / "db.sqlite3",
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
]
`,
    });
    expect(findDatabases(root)).toEqual([{ kind: "sqlite", path: "db.sqlite3", in: "mysite/settings.py:8" }]);
  });

  it("ignores in-memory databases, commented-out code and test folders", () => {
    const root = tree({
      "app.py": `import sqlite3\n# sqlite3.connect("legacy.db")\ncache = sqlite3.connect(":memory:")\n`,
      "tests/conftest.py": `import sqlite3\ndb = sqlite3.connect("test.db")\n`,
    });
    expect(findDatabases(root)).toEqual([]);
  });
});

describe("PostgreSQL from an environment variable", () => {
  const saved = process.env.QAAS_FIND_DB_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.QAAS_FIND_DB_URL;
    else process.env.QAAS_FIND_DB_URL = saved;
  });

  it("answers the variable a Node or Python app reads its URL from, never a URL", () => {
    expect(
      findDatabase(
        tree({
          "package.json": JSON.stringify({ dependencies: { pg: "8.23.1" } }),
          "src/pool.ts": `import pg from "pg";\nexport const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });\n`,
        }),
      ),
    ).toEqual({ kind: "postgres", url_env: "DATABASE_URL", in: "src/pool.ts:2" });
    expect(
      findDatabase(
        tree({
          "requirements.txt": "flask==2.2.2\npsycopg2-binary==2.9.9\n",
          "db.py": `import os\nimport psycopg2\nDB_HOST = os.environ["DB_HOST"]\nconnection = psycopg2.connect(os.getenv("PG_CONNECTION_STRING"))\n`,
        }),
      ),
    ).toEqual({ kind: "postgres", url_env: "PG_CONNECTION_STRING", in: "db.py:4" });
  });

  it("prefers the PostgreSQL URL when qaas has the variable, the SQLite default when it does not", () => {
    const root = tree({
      "requirements.txt": "SQLAlchemy==1.4.46\npsycopg2==2.9.5\n",
      "settings.py": `import os\nDATABASE = os.environ.get("QAAS_FIND_DB_URL", "sqlite:///local.db")\n`,
    });
    delete process.env.QAAS_FIND_DB_URL;
    expect(findDatabase(root)).toEqual({ kind: "sqlite", path: "local.db", in: "settings.py:2" });
    process.env.QAAS_FIND_DB_URL = "postgres://qaas@127.0.0.1:1/none";
    expect(findDatabase(root)).toEqual({
      kind: "postgres",
      url_env: "QAAS_FIND_DB_URL",
      in: "settings.py:2",
    });
  });

  it("says where a URL is written in the source without taking its credentials, and ignores MySQL apps", () => {
    const written = findDatabases(
      tree({
        "config.js": `module.exports = { db: { server: "postgres://admin:hunter2@db.internal/app" } };\n`,
      }),
    );
    expect(written).toEqual([{ kind: "postgres", in: "config.js:1" }]);
    expect(JSON.stringify(written)).not.toMatch(/hunter2/);
    expect(
      findDatabases(
        tree({
          "package.json": JSON.stringify({ dependencies: { mysql2: "3.0.0" } }),
          "db.js": `const mysql = require("mysql2");\nmodule.exports = mysql.createPool(process.env.DATABASE_URL);\n`,
        }),
      ),
    ).toEqual([]);
  });
});

describe("the effective database DBA and LOAD read", () => {
  const target = (root: string, database?: Record<string, unknown>): LoadedTarget => ({
    profile: TargetProfileSchema.parse({
      name: "found-db",
      source: {},
      environment: { mode: "none" },
      ...(database ? { database } : {}),
    }),
    file: path.join(root, "target.yaml"),
    root,
    goldenLedger: undefined,
  });

  it("is the profile's when it names one, else the one the source shows", () => {
    const root = tree({ "app.py": `import sqlite3\ndb = sqlite3.connect("instance/app.db")\n` });
    expect(effectiveDatabase(target(root))).toMatchObject({
      kind: "sqlite",
      path: "instance/app.db",
      from: "source",
      found: { in: "app.py:2" },
    });
    expect(effectiveDatabase(target(root, { kind: "sqlite", path: "other.db" }))).toEqual({
      kind: "sqlite",
      path: "other.db",
      from: "profile",
    });
  });

  it("lets db_schema read a SQLite file only the source names, read-only", async () => {
    const root = tree({
      "package.json": JSON.stringify({ dependencies: { "better-sqlite3": "12.11.1" } }),
      "server/db.ts": `import Database from "better-sqlite3";\nexport const db = new Database("var/billing.db");\n`,
    });
    createSqlite(path.join(root, "var", "billing.db"));
    const before = fs.statSync(path.join(root, "var", "billing.db")).mtimeMs;
    const context = fakeRunContext({ target: target(root), agent: testAgent({ name: "DBA" }) });
    const result = await callTool(dbTools.find((tool) => tool.name === "db_schema")!, {}, context);
    expect(result).toMatchObject({ ok: true, data: { kind: "sqlite", source: "database" } });
    const tables = (result as { data: { tables: Array<{ name: string }> } }).data.tables;
    expect(tables.map((table) => table.name)).toEqual(["invoices"]);
    expect(fs.statSync(path.join(root, "var", "billing.db")).mtimeMs).toBe(before);
  });

  it("names the variable to set, and where the source reads it, when a PostgreSQL URL is not in qaas's environment", () => {
    const root = tree({
      "package.json": JSON.stringify({ dependencies: { "pg-promise": "4.8.1" } }),
      "db.js": `const pgp = require("pg-promise")();\nmodule.exports = pgp(process.env.QAAS_UNSET_DATABASE_URL);\n`,
    });
    const context = fakeRunContext({ target: target(root), agent: testAgent({ name: "LOAD" }) });
    expect(databaseOf(context)).toBe(
      "PostgreSQL URL not available (found in db.js:2): set QAAS_UNSET_DATABASE_URL in the environment",
    );
    const none = fakeRunContext({ target: target(tree({ "README.md": "no database" })) });
    expect(databaseOf(none)).toBe("the target profile has no database section and its source shows none");
  });
});
