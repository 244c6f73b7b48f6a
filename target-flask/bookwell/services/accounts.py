import secrets
from datetime import datetime, timedelta

from werkzeug.security import check_password_hash, generate_password_hash

from .. import db

PROFILE_FIELDS = ("id", "clinic_id", "email", "name", "phone", "date_of_birth", "role")
MIN_PASSWORD_LENGTH = 10
RESET_LIFETIME = timedelta(hours=2)


def now():
    return datetime.now().strftime("%Y-%m-%dT%H:%M:%S")


def get(user_id):
    return db.row("SELECT * FROM users WHERE id = ?", (user_id,))


def get_active(user_id):
    return db.row("SELECT * FROM users WHERE id = ? AND active = 1", (user_id,))


def profile(user):
    return {field: user[field] for field in PROFILE_FIELDS}


def authenticate(email, password):
    user = db.row(
        "SELECT * FROM users WHERE lower(email) = lower(?) AND active = 1 ORDER BY id LIMIT 1",
        (email.strip(),),
    )
    if user is not None and check_password_hash(user["password_hash"], password):
        return user
    return None


def email_taken(email):
    return db.row("SELECT id FROM users WHERE email = ?", (email.strip(),)) is not None


def create(clinic_id, name, email, password, role, phone=None, date_of_birth=None):
    return db.execute(
        "INSERT INTO users (clinic_id, email, name, phone, date_of_birth, role, password_hash, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (clinic_id, email.strip(), name.strip(), phone, date_of_birth, role, generate_password_hash(password), now()),
    )


def update_contact(user_id, email, phone):
    db.execute("UPDATE users SET email = ?, phone = ? WHERE id = ?", (email.strip(), phone.strip(), user_id))


def start_password_reset(email):
    user = db.row("SELECT id FROM users WHERE email = ? AND active = 1", (email.strip(),))
    if user is None:
        return None
    token = secrets.token_urlsafe(24)
    expires = (datetime.now() + RESET_LIFETIME).strftime("%Y-%m-%dT%H:%M:%S")
    db.execute("UPDATE users SET reset_token = ?, reset_expires = ? WHERE id = ?", (token, expires, user["id"]))
    return token


def user_for_reset(token):
    return db.row(
        "SELECT * FROM users WHERE reset_token = ? AND reset_expires > ? AND active = 1", (token, now())
    )


def finish_password_reset(token, password):
    user = user_for_reset(token)
    if user is None:
        return False
    db.execute(
        "UPDATE users SET password_hash = ?, reset_token = NULL, reset_expires = NULL WHERE id = ?",
        (generate_password_hash(password), user["id"]),
    )
    return True


def team(clinic_id):
    return db.rows(
        "SELECT id, name, email, role, active FROM users WHERE clinic_id = ? AND role IN ('staff', 'admin') ORDER BY name",
        (clinic_id,),
    )
