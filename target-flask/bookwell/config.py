import os
from pathlib import Path

APP_ROOT = Path(__file__).resolve().parent.parent


def load_config(env=os.environ):
    data_dir = Path(env.get("BOOKWELL_DATA_DIR", APP_ROOT / "data"))
    return {
        "SECRET_KEY": env.get("BOOKWELL_SECRET_KEY", "bookwell-dev-secret-key"),
        "DATA_DIR": str(data_dir),
        "DATABASE": str(data_dir / "bookwell.db"),
        "SQL_LOG_FILE": str(data_dir / "sql.log") if env.get("BOOKWELL_SQL_LOG") == "1" else None,
        "TEST_RESET": env.get("BOOKWELL_TEST_RESET") == "1",
        "SOCKETIO_ASYNC_MODE": env.get("BOOKWELL_ASYNC_MODE", "gevent"),
        "SESSION_COOKIE_HTTPONLY": True,
        "SUPPORT_EMAIL": "support@bookwell.test",
    }
