from .. import db


def all_clinics():
    return db.rows("SELECT * FROM clinics ORDER BY name")


def by_slug(slug):
    return db.row("SELECT * FROM clinics WHERE slug = ?", (slug,))


def by_id(clinic_id):
    return db.row("SELECT * FROM clinics WHERE id = ?", (clinic_id,))


def search(text):
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return db.rows(
        "SELECT * FROM clinics WHERE name LIKE ? ESCAPE '\\' OR city LIKE ? ESCAPE '\\' ORDER BY name",
        (pattern, pattern),
    )


def practitioners(clinic_id):
    return db.rows("SELECT * FROM practitioners WHERE clinic_id = ? ORDER BY name", (clinic_id,))


def practitioner(clinic_id, practitioner_id):
    return db.row(
        "SELECT * FROM practitioners WHERE id = ? AND clinic_id = ?", (practitioner_id, clinic_id)
    )


def practitioner_by_id(practitioner_id):
    return db.row("SELECT * FROM practitioners WHERE id = ?", (practitioner_id,))


def add_practitioner(clinic_id, name, specialty, slot_minutes):
    return db.execute(
        "INSERT INTO practitioners (clinic_id, name, specialty, slot_minutes) VALUES (?, ?, ?, ?)",
        (clinic_id, name.strip(), specialty.strip(), slot_minutes),
    )


def remove_practitioner(clinic_id, practitioner_id):
    return db.get().execute(
        "DELETE FROM practitioners WHERE id = ? AND clinic_id = ?", (practitioner_id, clinic_id)
    ).rowcount
