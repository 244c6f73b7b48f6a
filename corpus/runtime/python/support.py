"""Shared plumbing of the generated Python corpus servers: the app, the database, sign-in and sessions,
JWTs, XML and a few sinks. Copied next to each generated app as lib/support.py. Deliberately small: the
behaviour under measurement lives in the generated handlers, where a reader sees it."""

import base64
import hashlib
import hmac
import html
import json
import os
import re
import secrets
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from flask import Flask, abort, g, jsonify, make_response, request

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The corpus folder: file sinks never read outside it, whatever their own checks say.
CORPUS_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


# ---------------------------------------------------------------- app


def create_app(name):
    app = Flask(name)
    app.config["JSON_SORT_KEYS"] = False
    app.json.sort_keys = False

    @app.errorhandler(400)
    def bad_request(_error):
        return jsonify(error="bad request"), 400

    @app.errorhandler(401)
    def unauthorized(_error):
        return jsonify(error="authentication required"), 401

    @app.errorhandler(403)
    def forbidden(_error):
        return jsonify(error="forbidden"), 403

    @app.errorhandler(404)
    def not_found(_error):
        return jsonify(error="not found"), 404

    @app.errorhandler(405)
    def not_allowed(_error):
        return jsonify(error="method not allowed"), 405

    @app.errorhandler(415)
    def unsupported(_error):
        return jsonify(error="unsupported media type"), 415

    @app.errorhandler(500)
    def internal(_error):
        return jsonify(error="internal error"), 500

    @app.after_request
    def protective_headers(response):
        if not getattr(g, "plain_headers", False):
            response.headers["X-Content-Type-Options"] = "nosniff"
            response.headers["X-Frame-Options"] = "DENY"
            response.headers["Content-Security-Policy"] = "default-src 'self'; frame-ancestors 'none'"
            response.headers["Referrer-Policy"] = "no-referrer"
        return response

    return app


def serve(app):
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", int(os.environ.get("PORT", "0")), app, threaded=True)
    print(f"listening on http://127.0.0.1:{server.server_port}", flush=True)
    import signal

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


def html_page(status, body):
    response = make_response(body, status)
    response.headers["Content-Type"] = "text/html; charset=utf-8"
    return response


def escape(value):
    return html.escape(str(value), quote=True)


def location_header(target):
    """A redirect target as a header can carry it: controls, spaces and non-ASCII percent-encoded."""
    return re.sub(r"[^\x21-\x7e]", lambda match: urllib.parse.quote(match.group(), safe=""), str(target))


def body_type_problem(body, rules):
    """Whether a JSON body keeps to its operation's documented top-level types; None when it does."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    checks = {
        "string": lambda value: isinstance(value, str),
        "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
        "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
        "boolean": lambda value: isinstance(value, bool),
        "array": lambda value: isinstance(value, list),
        "object": lambda value: isinstance(value, dict),
    }
    for name, kind in rules.items():
        if name in body and not checks.get(kind, lambda value: True)(body[name]):
            return f"{name} must be {'an integer' if kind == 'integer' else 'a ' + kind}"
    return None


def body_json():
    """The JSON body, or a 400 when it is not JSON at all."""
    data = request.get_json(silent=True)
    if data is None:
        abort(400)
    return data


# ---------------------------------------------------------------- database


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
            self.pool = psycopg2.pool.ThreadedConnectionPool(1, 16, url, options=f"-c search_path={schema}")
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


def seed(db, p, people, records, second_owns_data):
    """Seeds people (passwords from the environment), products and each variant's records."""
    db.script(schema_sql(db.kind))
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


# ---------------------------------------------------------------- passwords and tokens


def hash_password(password):
    salt = secrets.token_hex(16)
    key = hashlib.scrypt(password.encode(), salt=salt.encode(), n=16384, r=8, p=1, dklen=32).hex()
    return f"scrypt${salt}${key}"


def check_password(password, stored):
    parts = str(stored).split("$")
    if len(parts) != 3:
        return False
    candidate = hashlib.scrypt(str(password).encode(), salt=parts[1].encode(), n=16384, r=8, p=1, dklen=32).hex()
    return hmac.compare_digest(candidate, parts[2])


# A check against a fixed dummy hash, so an unknown account costs the same time as a wrong password.
DUMMY_HASH = hash_password(secrets.token_hex(12))

JWT_SECRET = secrets.token_hex(32)


def _b64url(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign_jwt(claims, secret=None, header=None):
    header = header or {"alg": "HS256", "typ": "JWT"}
    head = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
    if header.get("alg") == "none":
        return head + "."
    signature = hmac.new((secret or JWT_SECRET).encode(), head.encode(), hashlib.sha256).digest()
    return f"{head}.{_b64url(signature)}"


def decode_jwt(token):
    """Header and claims of a JWT, without checking anything."""
    parts = str(token).split(".")
    if len(parts) != 3:
        return None
    try:
        return {
            "header": json.loads(_unb64url(parts[0])),
            "claims": json.loads(_unb64url(parts[1])),
            "signed": f"{parts[0]}.{parts[1]}",
            "signature": parts[2],
        }
    except (ValueError, UnicodeDecodeError):
        return None


def hmac_matches(decoded, secret):
    expected = hmac.new(secret.encode(), decoded["signed"].encode(), hashlib.sha256).digest()
    try:
        given = _unb64url(decoded["signature"])
    except ValueError:
        return False
    return hmac.compare_digest(given, expected)


def verify_jwt(token):
    """The strict check: HS256 only, the server's secret, not expired."""
    decoded = decode_jwt(token)
    if not decoded or decoded["header"].get("alg") != "HS256" or not hmac_matches(decoded, JWT_SECRET):
        return None
    exp = decoded["claims"].get("exp")
    if not isinstance(exp, (int, float)) or exp < time.time():
        return None
    return decoded["claims"]


def bearer_token():
    header = request.headers.get("Authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else ""


# ---------------------------------------------------------------- who is asking

SESSIONS = {}


def open_session(user):
    session_id = secrets.token_hex(24)
    csrf = secrets.token_hex(16)
    SESSIONS[session_id] = {"user_id": user["id"], "csrf": csrf}
    return session_id, csrf


def session_of():
    return SESSIONS.get(request.cookies.get("session", ""))


def current_user(db, style, p):
    """The signed-in user of this request, by the server's sign-in style, or None."""
    if style == "bearer":
        claims = verify_jwt(bearer_token())
        return db.get(f"SELECT * FROM users WHERE id = {p(1)}", (claims["sub"],)) if claims else None
    if style == "cookie":
        session = session_of()
        return db.get(f"SELECT * FROM users WHERE id = {p(1)}", (session["user_id"],)) if session else None
    key = request.headers.get("X-API-Key", "")
    return db.get(f"SELECT * FROM users WHERE api_key = {p(1)}", (key,)) if key else None


class Lockout:
    """Failed sign-ins per account: five within a minute and the account answers 429 for thirty seconds."""

    def __init__(self, limit=5, window=60.0, lock=30.0):
        self.limit, self.window, self.lock = limit, window, lock
        self.failures = {}
        self.mutex = threading.Lock()

    def locked(self, key):
        with self.mutex:
            entry = self.failures.get(key)
            return entry is not None and entry["until"] > time.time()

    def fail(self, key):
        with self.mutex:
            now = time.time()
            entry = self.failures.setdefault(key, {"times": [], "until": 0.0})
            entry["times"] = [t for t in entry["times"] if now - t < self.window] + [now]
            if len(entry["times"]) >= self.limit:
                entry["until"] = now + self.lock
                entry["times"] = []

    def clear(self, key):
        with self.mutex:
            self.failures.pop(key, None)


# ---------------------------------------------------------------- sinks


def read_inside_corpus(path):
    """Files a sink may read: inside the corpus tree only, whatever the handler's own check did."""
    resolved = os.path.realpath(path)
    if not resolved.startswith(CORPUS_ROOT + os.sep):
        return None
    try:
        with open(resolved, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def shell(command_line):
    """Runs a command line through /bin/sh with a short timeout and an empty environment."""
    try:
        done = subprocess.run(["/bin/sh", "-c", command_line], capture_output=True, text=True, timeout=3,
                              env={"PATH": "/usr/bin:/bin"}, cwd=HERE)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timed out"


def run(argv):
    """Runs a program with an argument vector, no shell involved."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=3, env={"PATH": "/usr/bin:/bin"},
                              cwd=HERE)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timed out"


def fetch_loopback(url):
    """Fetches a URL when it points at this machine's loopback; anything else is refused before any traffic."""
    try:
        parsed = urllib.parse.urlparse(url)
    except ValueError:
        return False, 400, "not a URL"
    if parsed.scheme not in ("http", "https") or parsed.hostname not in ("127.0.0.1", "localhost", "::1"):
        return False, 502, "upstream unreachable"
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return True, response.status, response.read(4000).decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return True, error.code, ""
    except (urllib.error.URLError, OSError, ValueError):
        return False, 502, "upstream unreachable"


def parse_xml(text, resolve_entities):
    """lxml with or without external entity resolution; resolution only ever reads inside the corpus tree."""
    from lxml import etree

    class CorpusOnly(etree.Resolver):
        def resolve(self, system_url, _public_id, context):
            path = urllib.parse.urlparse(system_url).path if system_url.startswith("file:") else system_url
            content = read_inside_corpus(path)
            return self.resolve_string(content or "", context)

    parser = etree.XMLParser(resolve_entities=resolve_entities, load_dtd=resolve_entities, no_network=True)
    if resolve_entities:
        parser.resolvers.add(CorpusOnly())
    root = etree.fromstring(text.encode() if isinstance(text, str) else text, parser)
    return {child.tag: (child.text or "") for child in root if isinstance(child.tag, str)}


def matches_filter(document, condition_map):
    """A document filter in the style of MongoDB's: equality, or an object of $-operators."""
    for field, condition in condition_map.items():
        value = document.get(field)
        if not isinstance(condition, dict):
            if value != condition:
                return False
            continue
        for operator, operand in condition.items():
            if operator == "$eq" and not value == operand:
                return False
            if operator == "$ne" and not value != operand:
                return False
            if operator in ("$gt", "$gte", "$lt", "$lte"):
                try:
                    ok = {"$gt": value > operand, "$gte": value >= operand, "$lt": value < operand,
                          "$lte": value <= operand}[operator]
                except TypeError:
                    ok = False
                if not ok:
                    return False
            if operator == "$in" and not (isinstance(operand, list) and value in operand):
                return False
            if operator == "$nin" and not (isinstance(operand, list) and value not in operand):
                return False
            if operator == "$regex" and not re.search(str(operand), str(value)):
                return False
            if operator == "$exists" and (value is not None) != bool(operand):
                return False
            if operator not in ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$regex", "$exists"):
                return False
    return True
