from flask import Blueprint

from . import desk, me, slots

api = Blueprint("api", __name__, url_prefix="/api")
api.register_blueprint(slots.bp, url_prefix="/clinics/<slug>")
api.register_blueprint(desk.bp)
api.register_blueprint(me.bp)
