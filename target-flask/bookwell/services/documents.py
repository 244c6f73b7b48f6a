from datetime import datetime

from .. import db


def create(appointment_id, title, body):
    return db.execute(
        "INSERT INTO documents (appointment_id, title, body, created_at) VALUES (?, ?, ?, ?)",
        (appointment_id, title.strip(), body.strip(), datetime.now().strftime("%Y-%m-%dT%H:%M")),
    )


def get(document_id):
    return db.row("SELECT * FROM documents WHERE id = ?", (document_id,))


def for_appointment(appointment_id):
    return db.rows(
        "SELECT id, title, created_at FROM documents WHERE appointment_id = ? ORDER BY id", (appointment_id,)
    )
