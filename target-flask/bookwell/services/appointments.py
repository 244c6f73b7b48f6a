import math
from datetime import date, datetime, time, timedelta

from .. import db, realtime
from . import accounts, audit, billing, clinics

STARTS_AT_FORMAT = "%Y-%m-%dT%H:%M"
OPENING_HOURS = {0: (9, 17), 1: (9, 17), 2: (9, 17), 3: (9, 19), 4: (9, 17), 5: (9, 13)}
DESK_STATUSES = ("booked", "checked_in", "in_room", "attended", "no_show")
SHEET_ORDER = {
    "time": "starts_at, id",
    "status": "status, starts_at",
    "practitioner": "practitioner_id, starts_at",
    "recent": "created_at DESC, id DESC",
}
DETAIL_SQL = (
    "SELECT appointments.*, practitioners.name AS practitioner_name, users.name AS patient_name, "
    "clinics.slug AS clinic_slug, clinics.name AS clinic_name FROM appointments "
    "LEFT JOIN practitioners ON practitioners.id = appointments.practitioner_id "
    "JOIN users ON users.id = appointments.patient_id JOIN clinics ON clinics.id = appointments.clinic_id "
)


def parse_starts_at(day_text, time_text):
    return datetime.strptime(f"{day_text}T{time_text}", STARTS_AT_FORMAT)


def day_bounds(day):
    return day.isoformat(), (day + timedelta(days=1)).isoformat()


def free_slots(practitioner, day):
    opens, closes = OPENING_HOURS[day.weekday()]
    start, end = day_bounds(day)
    taken = {
        found["starts_at"]
        for found in db.rows(
            "SELECT starts_at FROM appointments WHERE practitioner_id = ? AND starts_at >= ? AND starts_at < ? "
            "AND status != 'cancelled'",
            (practitioner["id"], start, end),
        )
    }
    slot, closing = datetime.combine(day, time(opens)), datetime.combine(day, time(closes))
    step = timedelta(minutes=practitioner["slot_minutes"])
    free = []
    while slot + step <= closing:
        if slot.strftime(STARTS_AT_FORMAT) not in taken:
            free.append(slot.strftime("%H:%M"))
        slot += step
    return free


def is_free(practitioner_id, starts_at):
    return (
        db.row(
            "SELECT id FROM appointments WHERE practitioner_id = ? AND starts_at = ? AND status != 'cancelled'",
            (practitioner_id, starts_at),
        )
        is None
    )


def book(clinic, patient_id, practitioner, starts_at, reason, actor):
    with db.transaction():
        appointment_id = db.execute(
            "INSERT INTO appointments (clinic_id, patient_id, practitioner_id, starts_at, reason, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (clinic["id"], patient_id, practitioner["id"], starts_at, reason.strip(), accounts.now()),
        )
        billing.charge_deposit(clinic, patient_id, appointment_id, starts_at)
        audit.record(clinic["id"], actor["id"], "appointment.booked", f"appointment {appointment_id} at {starts_at}")
    realtime.appointment_booked(detail(appointment_id))
    return appointment_id


def get(appointment_id):
    return db.row("SELECT * FROM appointments WHERE id = ?", (appointment_id,))


def detail(appointment_id):
    return db.row(DETAIL_SQL + "WHERE appointments.id = ?", (appointment_id,))


def for_patient(patient_id):
    return db.rows(DETAIL_SQL + "WHERE appointments.patient_id = ? ORDER BY starts_at DESC", (patient_id,))


def get_for_patient(appointment_id, patient_id):
    return db.row(DETAIL_SQL + "WHERE appointments.id = ? AND appointments.patient_id = ?", (appointment_id, patient_id))


def get_in_clinic(appointment_id, clinic_id):
    return db.row(DETAIL_SQL + "WHERE appointments.id = ? AND appointments.clinic_id = ?", (appointment_id, clinic_id))


def day_sheet(clinic_id, day, sort="time", page=1, per_page=100):
    start, end = day_bounds(day)
    total = db.scalar(
        "SELECT COUNT(*) FROM appointments WHERE clinic_id = ? AND starts_at >= ? AND starts_at < ?",
        (clinic_id, start, end),
    )
    order = SHEET_ORDER.get(sort, SHEET_ORDER["time"])
    found = db.rows(
        "SELECT * FROM appointments WHERE clinic_id = ? AND starts_at >= ? AND starts_at < ? "
        "ORDER BY " + order + " LIMIT ? OFFSET ?",
        (clinic_id, start, end, per_page, (max(page, 1) - 1) * per_page),
    )
    entries = []
    for appointment in found:
        entry = dict(appointment)
        patient = accounts.get(appointment["patient_id"])
        practitioner = clinics.practitioner_by_id(appointment["practitioner_id"])
        entry["patient"] = accounts.profile(patient) if patient else None
        entry["practitioner"] = dict(practitioner) if practitioner else None
        entries.append(entry)
    return {
        "date": day.isoformat(),
        "sort": sort if sort in SHEET_ORDER else "time",
        "page": page,
        "pages": math.ceil(total / per_page),
        "total": total,
        "appointments": entries,
    }


def set_status(appointment, status, actor):
    db.execute("UPDATE appointments SET status = ? WHERE id = ?", (status, appointment["id"]))
    audit.record(appointment["clinic_id"], actor["id"], "appointment.status", f"appointment {appointment['id']} {status}")
    realtime.appointment_status(detail(appointment["id"]))


def cancel(appointment, actor):
    with db.transaction():
        db.execute("UPDATE appointments SET status = 'cancelled' WHERE id = ?", (appointment["id"],))
        refunded = billing.refund_deposit(appointment)
        audit.record(appointment["clinic_id"], actor["id"], "appointment.cancelled", f"appointment {appointment['id']}")
    realtime.appointment_cancelled(detail(appointment["id"]))
    return refunded


def waiting_queue(clinic_id):
    since = (date.today() - timedelta(days=1)).isoformat()
    return [
        dict(found)
        for found in db.rows(
            "SELECT appointments.id, appointments.starts_at, appointments.status, users.name AS patient, "
            "practitioners.name AS practitioner FROM appointments "
            "JOIN users ON users.id = appointments.patient_id "
            "LEFT JOIN practitioners ON practitioners.id = appointments.practitioner_id "
            "WHERE appointments.clinic_id = ? AND appointments.status IN ('checked_in', 'in_room') "
            "AND appointments.starts_at >= ? ORDER BY appointments.starts_at",
            (clinic_id, since),
        )
    ]
