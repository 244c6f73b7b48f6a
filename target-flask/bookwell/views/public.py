from flask import Blueprint, abort, g, jsonify, redirect, render_template, request

from .. import security
from ..services import clinics

bp = Blueprint("public", __name__)


@bp.get("/")
def home():
    if g.user is not None:
        return redirect(security.home_for(g.user))
    return render_template("public/home.html", clinics=clinics.all_clinics())


@bp.get("/health")
def health():
    return jsonify(status="ok")


@bp.get("/clinics")
def clinic_list():
    query = request.args.get("q", "").strip()
    found = clinics.search(query) if query else clinics.all_clinics()
    return render_template("public/clinics.html", clinics=found, query=query)


@bp.get("/clinics/<slug>")
def clinic(slug):
    found = clinics.by_slug(slug) or abort(404)
    return render_template("public/clinic.html", clinic=found, practitioners=clinics.practitioners(found["id"]))


@bp.get("/clinics/<slug>/display")
def lobby_display(slug):
    found = clinics.by_slug(slug)
    if found is None or request.args.get("key") != found["display_key"]:
        abort(404)
    return render_template("public/display.html", clinic=found, key=found["display_key"])
