from flask import Blueprint, abort, flash, g, redirect, render_template, request, url_for

from ..security import csrf_protect, login_required, roles_required
from ..services import accounts, audit, billing, clinics
from ..services.accounts import MIN_PASSWORD_LENGTH

bp = Blueprint("admin", __name__, url_prefix="/admin")
admin_only = roles_required("admin")
PAYMENT_COLUMNS = ("created_at", "amount_cents", "kind", "patient_name", "starts_at")


@bp.get("/")
@admin_only
def team():
    return render_template(
        "admin/team.html", team=accounts.team(g.user["clinic_id"]), clinic=clinics.by_id(g.user["clinic_id"])
    )


@bp.post("/staff")
@admin_only
@csrf_protect
def add_staff():
    form = request.form
    role = form.get("role", "staff")
    if role not in ("staff", "admin"):
        abort(400, description="A team member is staff or admin.")
    if "@" not in form.get("email", "") or not form.get("name", "").strip():
        flash("Enter a name and an email address.")
    elif accounts.email_taken(form["email"]):
        flash("Someone already uses that email address.")
    elif len(form.get("password", "")) < MIN_PASSWORD_LENGTH:
        flash(f"Choose a password of at least {MIN_PASSWORD_LENGTH} characters.")
    else:
        accounts.create(g.user["clinic_id"], form["name"], form["email"], form["password"], role)
        flash(f"{form['name']} can now sign in.")
    return redirect(url_for("admin.team"))


@bp.get("/audit")
@login_required
def audit_log():
    number = max(request.args.get("page", 1, type=int), 1)
    per_page = min(request.args.get("per_page", 50, type=int), 200)
    return render_template("admin/audit.html", log=audit.page(g.user["clinic_id"], number, per_page), per_page=per_page)


@bp.get("/payments")
@admin_only
def payments():
    column = request.args.get("sort", "created_at")
    direction = "ASC" if request.args.get("dir") == "asc" else "DESC"
    found = billing.clinic_payments(g.user["clinic_id"], f"{column} {direction}")
    return render_template(
        "admin/payments.html", payments=found, columns=PAYMENT_COLUMNS, sort=column, direction=direction
    )


@bp.get("/practitioners")
@admin_only
def practitioners():
    return render_template("admin/practitioners.html", practitioners=clinics.practitioners(g.user["clinic_id"]))


@bp.post("/practitioners")
@admin_only
@csrf_protect
def add_practitioner():
    minutes = request.form.get("slot_minutes", 30, type=int)
    name, specialty = request.form.get("name", "").strip(), request.form.get("specialty", "").strip()
    if not name or not specialty or minutes not in (15, 30, 45, 60):
        flash("Enter a name, a specialty and a slot length of 15, 30, 45 or 60 minutes.")
    else:
        clinics.add_practitioner(g.user["clinic_id"], name, specialty, minutes)
        flash(f"{name} has been added.")
    return redirect(url_for("admin.practitioners"))


@bp.post("/practitioners/<int:practitioner_id>/delete")
@admin_only
@csrf_protect
def remove_practitioner(practitioner_id):
    if clinics.remove_practitioner(g.user["clinic_id"], practitioner_id) == 0:
        abort(404)
    audit.record(g.user["clinic_id"], g.user["id"], "practitioner.removed", f"practitioner {practitioner_id}")
    flash("Practitioner removed.")
    return redirect(url_for("admin.practitioners"))
