from datetime import datetime

from .. import db
from ..views.templating import money
from . import documents


def _now():
    return datetime.now().strftime("%Y-%m-%dT%H:%M:%S")


def charge_deposit(clinic, patient_id, appointment_id, starts_at):
    amount = clinic["deposit_cents"]
    if amount <= 0:
        return 0
    db.execute(
        "INSERT INTO payments (user_id, appointment_id, kind, amount_cents, created_at) VALUES (?, ?, 'deposit', ?, ?)",
        (patient_id, appointment_id, amount, _now()),
    )
    documents.create(
        appointment_id,
        "Deposit receipt",
        f"We received your deposit of {money(amount)} for {starts_at.replace('T', ' ')}.",
    )
    return amount


def refund_deposit(appointment):
    deposit = db.row(
        "SELECT user_id, amount_cents FROM payments WHERE appointment_id = ? AND kind = 'deposit'",
        (appointment["id"],),
    )
    if deposit is None:
        return 0
    db.execute(
        "INSERT INTO payments (user_id, appointment_id, kind, amount_cents, created_at) VALUES (?, ?, 'refund', ?, ?)",
        (deposit["user_id"], appointment["id"], deposit["amount_cents"], _now()),
    )
    return deposit["amount_cents"]


def credit(user_id):
    return db.scalar(
        "SELECT COALESCE(SUM(amount_cents), 0) FROM payments WHERE user_id = ? AND kind = 'refund'", (user_id,)
    )


def clinic_payments(clinic_id, order_by="created_at DESC"):
    return db.rows(
        "SELECT * FROM (SELECT payments.id, payments.kind, payments.amount_cents, payments.created_at, "
        "users.name AS patient_name, appointments.starts_at "
        "FROM payments JOIN users ON users.id = payments.user_id "
        "LEFT JOIN appointments ON appointments.id = payments.appointment_id WHERE users.clinic_id = ?) "
        f"ORDER BY {order_by} LIMIT 200",
        (clinic_id,),
    )
