from datetime import date

from flask import Blueprint, abort, g, jsonify, request

from ...security import csrf_protect, roles_required
from ...services import appointments, patients

bp = Blueprint("desk_api", __name__, url_prefix="/desk")
desk_only = roles_required("staff", "admin")


@bp.get("/appointments")
@desk_only
def day_sheet():
    try:
        day = date.fromisoformat(request.args.get("date") or date.today().isoformat())
    except ValueError:
        abort(400, description="date must look like 2024-05-31.")
    page = max(request.args.get("page", 1, type=int), 1)
    per_page = min(max(request.args.get("per_page", 50, type=int), 1), 100)
    return jsonify(appointments.day_sheet(g.user["clinic_id"], day, request.args.get("sort", "time"), page, per_page))


@bp.post("/appointments/<int:appointment_id>/status")
@desk_only
@csrf_protect
def change_status(appointment_id):
    found = appointments.get(appointment_id)
    if found is None:
        abort(404, description="No such appointment.")
    status = (request.get_json(silent=True) or {}).get("status")
    if status not in appointments.DESK_STATUSES:
        return jsonify(ok=False, error=f"Unknown status {status!r}.")
    appointments.set_status(found, status, g.user)
    return jsonify(ok=True, id=appointment_id, status=status)


@bp.get("/patients/search")
@desk_only
def suggest_patients():
    found = patients.suggestions(g.user["clinic_id"], request.args.get("q", "").strip())
    return jsonify(patients=[dict(row) for row in found])


@bp.get("/patients/lookup")
@desk_only
def lookup_patient():
    found = patients.by_email(g.user["clinic_id"], request.args.get("email", ""))
    if found is None:
        abort(404, description="No patient with that email at this clinic.")
    return jsonify(patient=dict(found))
