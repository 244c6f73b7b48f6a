"""The corpus servers' database: one interface over SQLite and PostgreSQL, the statement log, the shared
schema and the seed. Copied next to each generated app as lib/database.py; lib/support.py re-exports it."""

import hashlib
import json
import os
import threading

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class StatementLog:
    """The statement log a profile's database.statement_log names: with CORPUS_SQL_LOG set (a path relative
    to the server folder), every statement the app sends is appended to that file, one line each, before it
    runs. Written unbuffered so a reader that marks the file around a request sees all of its statements
    once the answer arrives."""

    def __init__(self):
        target = os.environ.get("CORPUS_SQL_LOG")
        self.fd = None
        if target:
            file = os.path.join(HERE, target)
            os.makedirs(os.path.dirname(file), exist_ok=True)
            self.fd = os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.lock = threading.Lock()

    def write(self, sql):
        if self.fd is None:
            return
        line = (" ".join(str(sql).split()) + "\n").encode()
        with self.lock:
            os.write(self.fd, line)


class Database:
    """One interface over SQLite and PostgreSQL: all/get/run with the dialect's own placeholders."""

    def __init__(self, kind, schema):
        self.kind = kind
        self.lock = threading.Lock()
        self.log = StatementLog()
        if kind == "sqlite":
            import sqlite3

            target = os.environ.get("CORPUS_SQLITE_FILE")
            if target:
                # A file (a profile's database.path) only so that a reader outside the process (qaas's
                # query plans, the schema) can open the live database: durability is moot.
                target = os.path.join(HERE, target)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(target + suffix):
                        os.remove(target + suffix)
            self.conn = sqlite3.connect(target or ":memory:", check_same_thread=False)
            if target:
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.execute("PRAGMA synchronous = OFF")
            # Declared foreign keys are enforced, as PostgreSQL does (SQLite leaves them off per connection).
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.row_factory = sqlite3.Row
            self.conn.isolation_level = None
        else:
            import psycopg2
            import psycopg2.extras
            import psycopg2.pool

            url = os.environ.get("DATABASE_URL")
            if not url:
                raise RuntimeError("DATABASE_URL is not set: this server needs a PostgreSQL server")
            admin = psycopg2.connect(url)
            admin.autocommit = True
            with admin.cursor() as cursor:
                cursor.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
            admin.close()
            # psycopg2's pool closes every returned connection beyond `minconn`, so a low minimum would
            # open a new PostgreSQL backend for nearly every statement under a prober's concurrency (8).
            self.pool = psycopg2.pool.ThreadedConnectionPool(8, 16, url, options=f"-c search_path={schema}")
            # The pool raises when empty; a semaphore makes a busy moment wait instead of answering 500.
            self.slots = threading.BoundedSemaphore(16)
            self.extras = psycopg2.extras

    def _execute(self, sql, params, fetch):
        self.log.write(sql)
        if self.kind == "sqlite":
            with self.lock:
                cursor = self.conn.execute(sql, params or ())
                rows = [dict(row) for row in cursor.fetchall()] if fetch else []
                return rows, cursor.rowcount
        self.slots.acquire()
        conn = self.pool.getconn()
        try:
            conn.autocommit = True
            with conn.cursor(cursor_factory=self.extras.RealDictCursor) as cursor:
                cursor.execute(sql, params if params else None)
                rows = [dict(row) for row in cursor.fetchall()] if fetch and cursor.description else []
                return rows, cursor.rowcount
        finally:
            self.pool.putconn(conn)
            self.slots.release()

    def all(self, sql, params=None):
        return self._execute(sql, params, True)[0]

    def get(self, sql, params=None):
        rows = self._execute(sql, params, True)[0]
        return rows[0] if rows else None

    def run(self, sql, params=None):
        return self._execute(sql, params, False)[1]

    def script(self, sql):
        if self.kind == "sqlite":
            self.log.write(sql)
            with self.lock:
                self.conn.executescript(sql)
        else:
            self._execute(sql, None, False)


def schema_sql(kind):
    key = "INTEGER PRIMARY KEY" if kind == "sqlite" else "SERIAL PRIMARY KEY"
    return f"""
    DROP TABLE IF EXISTS events; DROP TABLE IF EXISTS tags; DROP TABLE IF EXISTS labels; DROP TABLE IF EXISTS products; DROP TABLE IF EXISTS records;
    DROP TABLE IF EXISTS users; DROP TABLE IF EXISTS orgs;
    CREATE TABLE orgs (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE users (id {key}, email TEXT UNIQUE NOT NULL, name TEXT NOT NULL, role TEXT NOT NULL,
      org_id INTEGER NOT NULL, password_hash TEXT NOT NULL, api_key TEXT UNIQUE, created_at TEXT NOT NULL);
    CREATE TABLE records (id {key}, uid TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, owner_id INTEGER NOT NULL,
      org_id INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL DEFAULT '', status TEXT NOT NULL DEFAULT 'open',
      role TEXT NOT NULL DEFAULT 'viewer', price INTEGER NOT NULL DEFAULT 0, quantity INTEGER NOT NULL DEFAULT 1,
      attrs TEXT NOT NULL DEFAULT '{{}}', views INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL);
    CREATE TABLE products (id {key}, sku TEXT NOT NULL, name TEXT NOT NULL, category TEXT NOT NULL,
      region TEXT NOT NULL, price INTEGER NOT NULL, stock INTEGER NOT NULL);
    CREATE TABLE labels (id {key}, kind TEXT NOT NULL, name TEXT NOT NULL CHECK (length(name) <= 40),
      created_at TEXT NOT NULL);
    CREATE TABLE tags (id {key}, record_id INTEGER NOT NULL, name TEXT NOT NULL);
    CREATE INDEX records_kind_owner ON records (kind, owner_id);
    CREATE INDEX tags_record ON tags (record_id);
    CREATE TABLE events (id {key}, kind TEXT NOT NULL, reference TEXT NOT NULL, code TEXT NOT NULL,
      sku TEXT NOT NULL, city TEXT NOT NULL, amount INTEGER NOT NULL, created_at TEXT NOT NULL);
    CREATE INDEX events_code ON events (code);
    CREATE INDEX events_sku ON events (sku);
    """


# The activity log the lookup variants search: thousands of rows, indexed on code and sku only. One
# statement in both dialects (a recursive count), so a reset stays quick.
EVENTS_SQL = """WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
    INSERT INTO events (kind, reference, code, sku, city, amount, created_at)
    SELECT CASE WHEN i - i / 3 * 3 = 0 THEN 'delivery' ELSE 'pickup' END, 'REF-' || CAST(100000 + i AS TEXT),
      'C-' || CAST(i AS TEXT), 'SKU-' || CAST(100 + i - i / 8 * 8 AS TEXT),
      CASE i - i / 5 * 5 WHEN 0 THEN 'Lisbon' WHEN 1 THEN 'Porto' WHEN 2 THEN 'Braga' WHEN 3 THEN 'Faro' ELSE 'Evora' END,
      i * 37 - i * 37 / 1000 * 1000, '2026-01-01T00:00:00Z'
    FROM n"""


PRODUCTS = [
    ("SKU-100", "anchor bolt", "hardware", "eu", 120, 40),
    ("SKU-101", "brass hinge", "hardware", "us", 340, 12),
    ("SKU-102", "cedar plank", "timber", "eu", 990, 7),
    ("SKU-103", "copper wire", "electrical", "apac", 560, 0),
    ("SKU-104", "dowel pin", "hardware", "us", 15, 300),
    ("SKU-105", "oak beam", "timber", "apac", 4200, 3),
    ("SKU-106", "wall plug", "electrical", "eu", 45, 88),
    ("SKU-107", "zinc bracket", "hardware", "us", 230, 19),
]


def variant_tables_sql(kind, tables):
    """The variants' own tables: dropped (newest first) and made anew, so a reset starts them empty."""
    key = "INTEGER PRIMARY KEY" if kind == "sqlite" else "SERIAL PRIMARY KEY"
    drops = [f"DROP TABLE IF EXISTS {table['name']};" for table in reversed(tables)]
    return "\n".join(drops + [table["ddl"].replace("{key}", key) for table in tables])


def seed(db, p, people, records, second_owns_data, tables=()):
    """Seeds people (passwords from the environment), products and each variant's records."""
    # Imported here: support.py imports this module while it loads, so a top-level import would be a cycle.
    from .support import hash_password

    db.script(schema_sql(db.kind))
    if tables:
        db.script(variant_tables_sql(db.kind, list(tables)))
    db.run("INSERT INTO orgs (id, name) VALUES (1, 'Northwind'), (2, 'Southpaw')")
    for person in people:
        password = required_env(f"CORPUS_{person['key'].upper()}_PASSWORD")
        api_key = os.environ.get(f"CORPUS_{person['key'].upper()}_API_KEY")
        db.run(
            f"INSERT INTO users (email, name, role, org_id, password_hash, api_key, created_at) "
            f"VALUES ({p(1)}, {p(2)}, {p(3)}, {p(4)}, {p(5)}, {p(6)}, {p(7)})",
            (person["email"], person["name"], person["role"], person["org"], hash_password(password), api_key,
             "2026-01-05T09:00:00Z"),
        )
    for product in PRODUCTS:
        db.run(
            f"INSERT INTO products (sku, name, category, region, price, stock) "
            f"VALUES ({p(1)}, {p(2)}, {p(3)}, {p(4)}, {p(5)}, {p(6)})",
            product,
        )
    db.run(EVENTS_SQL)
    users = db.all("SELECT id, email, org_id FROM users ORDER BY id")
    by_key = {person["key"]: users[index] for index, person in enumerate(people)}
    # Rows go in fifty to a statement: the performance variants seed hundreds per owner, and one round trip
    # each would slow a PostgreSQL server's start and every reset.
    rows = []
    tagged = []
    counter = 0
    for record in records:
        if record.get("tags"):
            tagged.append(record)
        for key in record.get("owners", ["alice", "bruno"]):
            if key == "bruno" and not second_owns_data:
                continue
            owner = by_key[key]
            for copy in range(record.get("count", 2)):
                counter += 1
                rows.append((stable_uid(f"{record['kind']}:{key}:{copy}"), record["kind"], owner["id"], owner["org_id"],
                             f"{record.get('title', 'Entry')} {counter}", f"{key}'s private note {counter}", "open",
                             100 + counter, 1 + counter % 5,
                             json.dumps(record.get("attrs", {"colour": "teal", "size": counter % 3})),
                             "2026-02-01T10:00:00Z"))
    for start in range(0, len(rows), 50):
        chunk = rows[start:start + 50]
        tuples = ", ".join(
            "(" + ", ".join(p(index * 11 + column + 1) for column in range(11)) + ")" for index in range(len(chunk))
        )
        db.run(
            "INSERT INTO records (uid, kind, owner_id, org_id, title, body, status, price, quantity, attrs, "
            f"created_at) VALUES {tuples}",
            tuple(value for row in chunk for value in row),
        )
    for record in tagged:
        for tag in range(record["tags"]):
            db.run(
                f"INSERT INTO tags (record_id, name) SELECT id, CAST({p(1)} AS TEXT) || CAST((id + {tag}) - (id + {tag}) / 7 * 7 AS TEXT) "
                f"FROM records WHERE kind = {p(2)}",
                (f"tag-{tag}-", record["kind"]),
            )


def stable_uid(text):
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"{digest[0:8]}-{digest[8:12]}-4{digest[13:16]}-a{digest[17:20]}-{digest[20:32]}"


def required_env(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set (see corpus/targets/corpus.secrets.env)")
    return value
