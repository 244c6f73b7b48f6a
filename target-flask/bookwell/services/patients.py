from .. import db

LIST_COLUMNS = "id, name, email, phone, date_of_birth"


def search(clinic_id, text, limit=50):
    sql = (
        f"SELECT {LIST_COLUMNS} FROM users WHERE clinic_id = ? AND role = 'patient' "
        f"AND (name LIKE '%{text}%' OR email LIKE '%{text}%') ORDER BY name LIMIT ?"
    )
    return db.rows(sql, (clinic_id, limit))


def suggestions(clinic_id, prefix):
    return db.rows(
        f"SELECT {LIST_COLUMNS} FROM users WHERE clinic_id = ? AND role = 'patient' AND name LIKE ? || '%' ORDER BY name",
        (clinic_id, prefix),
    )


def by_email(clinic_id, email):
    return db.row(
        "SELECT * FROM users WHERE clinic_id = ? AND role = 'patient' AND email = ?", (clinic_id, email.strip())
    )


def in_clinic(clinic_id, patient_id):
    return db.row(
        f"SELECT {LIST_COLUMNS} FROM users WHERE id = ? AND clinic_id = ? AND role = 'patient'",
        (patient_id, clinic_id),
    )
