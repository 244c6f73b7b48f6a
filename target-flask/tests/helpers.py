import logging
import re
import sqlite3
import sys
import tempfile
import unittest
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

APP_ROOT = Path(__file__).resolve().parents[1]
if str(APP_ROOT) not in sys.path:
    sys.path.insert(0, str(APP_ROOT))

from bookwell import create_app, db  # noqa: E402
from bookwell.realtime import socketio  # noqa: E402
from bookwell.seed import open_day  # noqa: E402

SECRETS_FILE = APP_ROOT.parent / "config" / "targets" / "clinic.secrets.env"
EMAILS = {
    "maria": "maria@northside.test",
    "sam": "sam@northside.test",
    "paula": "paula@mail.test",
    "peter": "peter@mail.test",
    "hank": "hank@harbour.test",
    "tess": "tess@harbour.test",
    "quinn": "quinn@mail.test",
}
CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]+)"')


def _passwords():
    values = {}
    for line in SECRETS_FILE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^CLINIC_([A-Z]+)_PASSWORD=(.+)$", line.strip())
        if match:
            values[match.group(1).lower()] = match.group(2)
    return values


PASSWORDS = _passwords()
_shared = {}


def shared_app():
    if "app" not in _shared:
        _shared["dir"] = tempfile.TemporaryDirectory(prefix="bookwell-test-")
        _shared["app"] = create_app({
            "DATA_DIR": _shared["dir"].name,
            "DATABASE": str(Path(_shared["dir"].name) / "bookwell.db"),
            "SQL_LOG_FILE": None,
            "TEST_RESET": True,
            "SOCKETIO_ASYNC_MODE": "threading",
        })
        _shared["app"].logger.setLevel(logging.CRITICAL)
    return _shared["app"]


def open_weekday(offset):
    """An open day (not a Sunday) `offset` open days from today."""
    return open_day(date.today(), offset)


def next_sunday():
    today = date.today()
    return today + timedelta(days=(6 - today.weekday()) or 7)


class BookwellCase(unittest.TestCase):
    def setUp(self):
        self.app = shared_app()
        with self.app.app_context():
            db.reset()

    def client(self):
        return self.app.test_client()

    def csrf(self, client, path="/account/sign-in"):
        page = client.get(path)
        match = CSRF_INPUT.search(page.get_data(as_text=True))
        self.assertIsNotNone(match, f"no CSRF field on {path}")
        return match.group(1)

    def submit_sign_in(self, client, name, next_url=""):
        return client.post("/account/sign-in", data={
            "csrf_token": self.csrf(client), "email": EMAILS[name], "password": PASSWORDS[name], "next": next_url,
        })

    def sign_in(self, name):
        client = self.client()
        response = self.submit_sign_in(client, name)
        self.assertEqual(response.status_code, 302, f"{name} could not sign in")
        return client

    def text(self, client, path):
        return client.get(path).get_data(as_text=True)

    def sql(self, statement, params=()):
        conn = sqlite3.connect(self.app.config["DATABASE"])
        conn.row_factory = sqlite3.Row
        try:
            return conn.execute(statement, params).fetchall()
        finally:
            conn.close()

    def user_id(self, name):
        return self.sql("SELECT id FROM users WHERE email = ?", (EMAILS[name],))[0]["id"]

    def appointment_of(self, name, status="booked"):
        return self.sql(
            "SELECT * FROM appointments WHERE patient_id = ? AND status = ? ORDER BY id LIMIT 1",
            (self.user_id(name), status),
        )[0]

    def socket(self, namespace, client=None):
        return socketio.test_client(self.app, namespace=namespace, flask_test_client=client)

    @contextmanager
    def statements(self):
        seen = []
        listeners = self.app.extensions[db.LISTENERS]
        listeners.append(seen.append)
        try:
            yield seen
        finally:
            listeners.remove(seen.append)


def events(socket_client, namespace, name):
    return [packet["args"] for packet in socket_client.get_received(namespace) if packet["name"] == name]
