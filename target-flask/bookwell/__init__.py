"""Bookwell: the booking desk of small clinics (patients book, reception runs the day, managers administer)."""

from flask import Flask

from . import db, errors, realtime, security
from .config import load_config
from .views import register_views


def create_app(overrides=None):
    app = Flask(__name__)
    app.config.update(load_config())
    app.config.update(overrides or {})
    db.init_app(app)
    security.init_app(app)
    errors.init_app(app)
    register_views(app)
    realtime.socketio.init_app(app, async_mode=app.config["SOCKETIO_ASYNC_MODE"])
    return app
