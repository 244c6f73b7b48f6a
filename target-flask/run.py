"""Serves Bookwell on 127.0.0.1 (PORT, default 4020), creating and seeding the database on first start."""

import os
from pathlib import Path

from bookwell import create_app, db
from bookwell.realtime import socketio

app = create_app()

if __name__ == "__main__":
    if not Path(app.config["DATABASE"]).exists():
        with app.app_context():
            db.reset()
    socketio.run(
        app,
        host="127.0.0.1",
        port=int(os.environ.get("PORT", "4020")),
        log_output=os.environ.get("BOOKWELL_ACCESS_LOG") == "1",
    )
