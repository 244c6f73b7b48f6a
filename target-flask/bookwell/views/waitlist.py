from flask import Blueprint, flash, g, redirect, render_template, request, url_for

from .. import db
from ..security import csrf_protect, roles_required

bp = Blueprint("waitlist", __name__, url_prefix="/my/waitlist")


@bp.get("/")
@roles_required("patient")
def waitlist():
    entries = db.rows(
        "SELECT practitioners.name, practitioners.specialty FROM practitioners WHERE clinic_id = ? ORDER BY name",
        (g.user["clinic_id"],),
    )
    return render_template("portal/waitlist.html", entries=entries)


@bp.post("/")
@roles_required("patient")
@csrf_protect
def join():
    practitioner_id = request.form.get("practitioner_id", type=int)
    db.execute(
        "INSERT INTO audit_log (clinic_id, actor_id, action, detail, created_at) "
        "VALUES (?, ?, 'waitlist.joined', ?, datetime('now'))",
        (g.user["clinic_id"], g.user["id"], f"practitioner {practitioner_id}"),
    )
    flash("We'll let you know when an earlier time frees up.")
    return redirect(url_for("portal.appointments"))
