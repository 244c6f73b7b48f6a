from datetime import date

from flask import Blueprint, abort, g, jsonify, request

from ...security import login_required
from ...services import appointments, clinics

bp = Blueprint("slots", __name__)


@bp.get("/slots")
@login_required
def free_slots(slug):
    clinic = clinics.by_slug(slug)
    if clinic is None or clinic["id"] != g.user["clinic_id"]:
        abort(404, description="No such clinic.")
    practitioner = clinics.practitioner(clinic["id"], request.args.get("practitioner", type=int))
    if practitioner is None:
        abort(404, description="No such practitioner.")
    try:
        day = date.fromisoformat(request.args.get("date", ""))
    except ValueError:
        abort(400, description="date must look like 2024-05-31.")
    return jsonify(date=day.isoformat(), practitioner=practitioner["id"], times=appointments.free_slots(practitioner, day))
