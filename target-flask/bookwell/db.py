import sqlite3
from contextlib import contextmanager
from pathlib import Path

from flask import current_app, g

SCHEMA = Path(__file__).with_name("schema.sql")
LISTENERS = "bookwell.sql_listeners"


def init_app(app):
    app.extensions[LISTENERS] = []
    Path(app.config["DATA_DIR"]).mkdir(parents=True, exist_ok=True)
    app.teardown_appcontext(close)


def connect(app):
    conn = sqlite3.connect(app.config["DATABASE"], timeout=10, isolation_level=None)
    conn.row_factory = sqlite3.Row
    log_path = app.config.get("SQL_LOG_FILE")
    log = open(log_path, "a", encoding="utf-8", buffering=1) if log_path else None
    listeners = app.extensions[LISTENERS]

    def trace(statement):
        for listener in list(listeners):
            listener(statement)
        if log is not None:
            log.write(" ".join(statement.split()) + "\n")

    conn.set_trace_callback(trace)
    return conn, log


def get():
    if "db" not in g:
        g.db, g.db_log = connect(current_app)
    return g.db


def close(_error=None):
    conn = g.pop("db", None)
    log = g.pop("db_log", None)
    if conn is not None:
        conn.close()
    if log is not None:
        log.close()


def row(sql, params=()):
    return get().execute(sql, params).fetchone()


def rows(sql, params=()):
    return get().execute(sql, params).fetchall()


def scalar(sql, params=()):
    found = get().execute(sql, params).fetchone()
    return None if found is None else found[0]


def execute(sql, params=()):
    return get().execute(sql, params).lastrowid


@contextmanager
def transaction():
    conn = get()
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def reset(today=None):
    from . import seed

    conn = get()
    conn.executescript("BEGIN IMMEDIATE;\n" + SCHEMA.read_text(encoding="utf-8"))
    try:
        seed.load(conn, today)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
