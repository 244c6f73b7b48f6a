from datetime import date

from flask import Blueprint, abort, flash, g, redirect, render_template, request, url_for

from ..security import csrf_protect, roles_required
from ..services import appointments, clinics, documents, patients

bp = Blueprint("desk", __name__, url_prefix="/staff")
desk_only = roles_required("staff", "admin")


def _day(text):
    try:
        return date.fromisoformat(text) if text else date.today()
    except ValueError:
        abort(400, description="Dates look like 2024-05-31.")


@bp.get("/")
@desk_only
def day_sheet():
    day = _day(request.args.get("date"))
    sheet = appointments.day_sheet(g.user["clinic_id"], day, request.args.get("sort", "time"))
    return render_template("desk/day.html", sheet=sheet, day=day, clinic=clinics.by_id(g.user["clinic_id"]))


@bp.get("/appointments/<int:appointment_id>")
@desk_only
def appointment(appointment_id):
    found = appointments.get_in_clinic(appointment_id, g.user["clinic_id"]) or abort(404)
    return render_template(
        "desk/appointment.html", appointment=found, documents=documents.for_appointment(appointment_id),
        statuses=appointments.DESK_STATUSES,
    )


@bp.post("/appointments/<int:appointment_id>/documents")
@desk_only
@csrf_protect
def add_document(appointment_id):
    found = appointments.get_in_clinic(appointment_id, g.user["clinic_id"]) or abort(404)
    title, body = request.form.get("title", "").strip(), request.form.get("body", "").strip()
    if not title or not body:
        flash("A document needs a title and some text.")
    else:
        documents.create(found["id"], title, body)
        flash("Document added; the patient can read it in their portal.")
    return redirect(url_for("desk.appointment", appointment_id=appointment_id))


@bp.route("/appointments/new", methods=["GET", "POST"])
@desk_only
def book():
    clinic = clinics.by_id(g.user["clinic_id"])
    choices = clinics.practitioners(clinic["id"])
    if request.method == "GET":
        return render_template("desk/book.html", practitioners=choices, form={})
    return _submit_booking(clinic, choices)


@csrf_protect
def _submit_booking(clinic, choices):
    form = request.form
    patient = patients.in_clinic(clinic["id"], form.get("patient_id", type=int))
    practitioner = clinics.practitioner(clinic["id"], form.get("practitioner_id", type=int))
    try:
        starts_at = appointments.parse_starts_at(form.get("date", ""), form.get("time", ""))
    except ValueError:
        starts_at = None
    if patient is None or practitioner is None or starts_at is None:
        return render_template(
            "desk/book.html", practitioners=choices, form=form,
            error="Choose a patient, a practitioner, a date and a time.",
        ), 422
    starts_text = starts_at.strftime(appointments.STARTS_AT_FORMAT)
    appointment_id = appointments.book(clinic, patient["id"], practitioner, starts_text, form.get("reason", ""), g.user)
    flash(f"Booked {patient['name']} with {practitioner['name']}.")
    return redirect(url_for("desk.appointment", appointment_id=appointment_id))


@bp.get("/patients")
@desk_only
def patient_list():
    query = request.args.get("q", "").strip()
    found = patients.search(g.user["clinic_id"], query)
    return render_template("desk/patients.html", patients=found, query=query)


@bp.get("/patients/<int:patient_id>")
@desk_only
def patient(patient_id):
    found = patients.in_clinic(g.user["clinic_id"], patient_id) or abort(404)
    history = appointments.for_patient(patient_id)
    return render_template("desk/patient.html", patient=found, history=history)
