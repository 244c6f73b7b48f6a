from datetime import date

from flask import Blueprint, abort, flash, g, redirect, render_template, request, url_for

from ..security import csrf_protect, roles_required
from ..services import accounts, appointments, billing, clinics, documents

bp = Blueprint("portal", __name__, url_prefix="/my")
patient_only = roles_required("patient")


@bp.get("/")
@patient_only
def home():
    return redirect(url_for("portal.appointments"))


@bp.get("/appointments", endpoint="appointments")
@patient_only
def list_appointments():
    today = date.today().isoformat()
    mine = appointments.for_patient(g.user["id"])
    upcoming = [a for a in mine if a["starts_at"] >= today and a["status"] != "cancelled"]
    past = [a for a in mine if a not in upcoming]
    return render_template("portal/appointments.html", upcoming=upcoming, past=past)


@bp.route("/appointments/new", methods=["GET", "POST"])
@patient_only
def book():
    clinic = clinics.by_id(g.user["clinic_id"])
    choices = clinics.practitioners(clinic["id"])
    if request.method == "GET":
        return render_template("portal/book.html", clinic=clinic, practitioners=choices, form={})
    return _submit_booking(clinic, choices)


@csrf_protect
def _submit_booking(clinic, choices):
    form = request.form
    practitioner = clinics.practitioner(clinic["id"], form.get("practitioner_id", type=int))
    error = None
    try:
        starts_at = appointments.parse_starts_at(form.get("date", ""), form.get("time", ""))
    except ValueError:
        error = "Choose a date and a time."
    else:
        starts_text = starts_at.strftime(appointments.STARTS_AT_FORMAT)
        if practitioner is None:
            error = "Choose a practitioner."
        elif not appointments.is_free(practitioner["id"], starts_text):
            error = "That time has just been taken. Please choose another."
    if error:
        return render_template(
            "portal/book.html", clinic=clinic, practitioners=choices, form=form, error=error
        ), 422
    appointment_id = appointments.book(clinic, g.user["id"], practitioner, starts_text, form.get("reason", ""), g.user)
    flash(f"Booked. We charged your card on file a deposit of £{clinic['deposit_cents'] / 100:.2f}.")
    return redirect(url_for("portal.appointment", appointment_id=appointment_id))


def _own_appointment(appointment_id):
    return appointments.get_for_patient(appointment_id, g.user["id"]) or abort(404)


@bp.get("/appointments/<int:appointment_id>")
@patient_only
def appointment(appointment_id):
    found = _own_appointment(appointment_id)
    return render_template(
        "portal/appointment.html", appointment=found, documents=documents.for_appointment(appointment_id)
    )


@bp.post("/appointments/<int:appointment_id>/cancel")
@patient_only
@csrf_protect
def cancel(appointment_id):
    found = _own_appointment(appointment_id)
    appointments.cancel(found, g.user)
    return redirect(url_for("portal.cancelled", appointment_id=appointment_id))


@bp.get("/appointments/<int:appointment_id>/cancelled")
@patient_only
def cancelled(appointment_id):
    found = _own_appointment(appointment_id)
    return render_template("portal/cancelled.html", appointment=found, credit=billing.credit(g.user["id"]))


@bp.get("/appointments/<int:appointment_id>/documents/<int:document_id>")
@patient_only
def document(appointment_id, document_id):
    found = _own_appointment(appointment_id)
    doc = documents.get(document_id) or abort(404)
    return render_template("portal/document.html", appointment=found, document=doc)


@bp.route("/profile", methods=["GET", "POST"])
@patient_only
def profile():
    if request.method == "POST":
        email, phone = request.form.get("email", ""), request.form.get("phone", "")
        if "@" not in email:
            flash("Enter a valid email address.")
        else:
            accounts.update_contact(g.user["id"], email, phone)
            flash("Your contact details have been saved.")
        return redirect(url_for("portal.profile"))
    return render_template("portal/profile.html", credit=billing.credit(g.user["id"]))
