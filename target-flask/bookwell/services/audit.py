import math
from datetime import datetime

from .. import db


def record(clinic_id, actor_id, action, detail):
    db.execute(
        "INSERT INTO audit_log (clinic_id, actor_id, action, detail, created_at) VALUES (?, ?, ?, ?, ?)",
        (clinic_id, actor_id, action, detail, datetime.now().strftime("%Y-%m-%dT%H:%M:%S")),
    )


def page(clinic_id, number=1, per_page=50):
    total = db.scalar("SELECT COUNT(*) FROM audit_log WHERE clinic_id = ?", (clinic_id,))
    entries = db.rows(
        "SELECT audit_log.*, users.name AS actor_name FROM audit_log "
        "LEFT JOIN users ON users.id = audit_log.actor_id "
        "WHERE audit_log.clinic_id = ? ORDER BY audit_log.id DESC LIMIT ? OFFSET ?",
        (clinic_id, per_page, (number - 1) * per_page),
    )
    return {"entries": entries, "page": number, "pages": max(math.ceil(total / per_page), 1), "total": total}
