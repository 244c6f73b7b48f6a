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
            response.headers["Content-Security-Policy"] = getattr(g, "csp", None) or "default-src 'self'; frame-ancestors 'none'"
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


# ---------------------------------------------------------------- database (lib/database.py)

from .database import Database, required_env, schema_sql, seed, stable_uid  # noqa: E402,F401


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
