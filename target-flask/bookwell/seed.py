import random
from datetime import date, datetime, timedelta

from .seed_data import (
    CLINICS,
    FIRST_NAMES,
    IMPORTED_PATIENT_HASH,
    IMPORTED_PATIENTS,
    LAST_NAMES,
    PRACTITIONERS,
    REASONS,
    USERS,
)

SUNDAY = 6


def open_day(today, offset):
    """The open day `offset` open days from today (0: today, or Monday when today is a Sunday)."""
    day = today
    step = 1 if offset >= 0 else -1
    while day.weekday() == SUNDAY:
        day += timedelta(days=1)
    for _ in range(abs(offset)):
        day += timedelta(days=step)
        while day.weekday() == SUNDAY:
            day += timedelta(days=step)
    return day


def at(day, hour, minute=0):
    return datetime(day.year, day.month, day.day, hour, minute).strftime("%Y-%m-%dT%H:%M")


def load(conn, today=None):
    today = today or date.today()
    created = (datetime.now() - timedelta(days=30)).strftime("%Y-%m-%dT%H:%M")
    rng = random.Random(7)
    clinic_ids, users, practitioners = {}, {}, {}

    for clinic in CLINICS:
        clinic_ids[clinic["slug"]] = conn.execute(
            "INSERT INTO clinics (slug, name, city, phone, display_key, deposit_cents) VALUES (?, ?, ?, ?, ?, ?)",
            (clinic["slug"], clinic["name"], clinic["city"], clinic["phone"], clinic["display_key"], clinic["deposit_cents"]),
        ).lastrowid
        practitioners[clinic["slug"]] = [
            conn.execute(
                "INSERT INTO practitioners (clinic_id, name, specialty, slot_minutes) VALUES (?, ?, ?, ?)",
                (clinic_ids[clinic["slug"]], name, specialty, minutes),
            ).lastrowid
            for name, specialty, minutes in PRACTITIONERS[clinic["slug"]]
        ]

    for user in USERS:
        users[user["key"]] = conn.execute(
            "INSERT INTO users (clinic_id, email, name, phone, date_of_birth, role, password_hash, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (clinic_ids[user["clinic"]], user["email"], user["name"], user["phone"], user.get("date_of_birth"),
             user["role"], user["password_hash"], created),
        ).lastrowid

    imported = {slug: [] for slug in IMPORTED_PATIENTS}
    number = 0
    for slug, count in IMPORTED_PATIENTS.items():
        for _ in range(count):
            number += 1
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            born = date(1950, 1, 1) + timedelta(days=rng.randrange(20000))
            imported[slug].append(conn.execute(
                "INSERT INTO users (clinic_id, email, name, phone, date_of_birth, role, password_hash, created_at) "
                "VALUES (?, ?, ?, ?, ?, 'patient', ?, ?)",
                (clinic_ids[slug], f"{first}.{last}{number}@mail.test".lower(), f"{first} {last}",
                 f"07700 9{number:05d}", born.isoformat(), IMPORTED_PATIENT_HASH, created),
            ).lastrowid)

    def appointment(slug, patient, practitioner, starts_at, reason, status="booked"):
        clinic_id = clinic_ids[slug]
        appointment_id = conn.execute(
            "INSERT INTO appointments (clinic_id, patient_id, practitioner_id, starts_at, status, reason, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (clinic_id, patient, practitioner, starts_at, status, reason, created),
        ).lastrowid
        deposit = next(c["deposit_cents"] for c in CLINICS if c["slug"] == slug)
        conn.execute(
            "INSERT INTO payments (user_id, appointment_id, kind, amount_cents, created_at) VALUES (?, ?, 'deposit', ?, ?)",
            (patient, appointment_id, deposit, created),
        )
        conn.execute(
            "INSERT INTO documents (appointment_id, title, body, created_at) VALUES (?, 'Deposit receipt', ?, ?)",
            (appointment_id, f"We received your deposit of £{deposit / 100:.2f} for {starts_at.replace('T', ' ')}.", created),
        )
        conn.execute(
            "INSERT INTO audit_log (clinic_id, actor_id, action, detail, created_at) VALUES (?, ?, 'appointment.booked', ?, ?)",
            (clinic_id, patient, f"appointment {appointment_id} at {starts_at}", created),
        )
        return appointment_id

    def document(appointment_id, title, body):
        conn.execute(
            "INSERT INTO documents (appointment_id, title, body, created_at) VALUES (?, ?, ?, ?)",
            (appointment_id, title, body, created),
        )

    ns, hb = practitioners["northside"], practitioners["harbour"]
    paula_next = appointment("northside", users["paula"], ns[0], at(open_day(today, 2), 10), "Knee pain after running")
    document(paula_next, "Exercise plan", "Straight-leg raises 3x10 daily; ice after runs; no hill running for two weeks.")
    paula_past = appointment("northside", users["paula"], ns[0], at(open_day(today, -6), 9, 30), "Knee pain", "attended")
    document(paula_past, "Treatment summary", "Patellofemoral pain, right knee. Taping applied. Review in two weeks.")
    appointment("northside", users["peter"], ns[1], at(open_day(today, 3), 11, 30), "Lower back stiffness\nWorse in the mornings")
    quinn_next = appointment("harbour", users["quinn"], hb[0], at(open_day(today, 2), 14), "Shoulder review after MRI")
    document(quinn_next, "Scan report", "MRI left shoulder: partial-thickness supraspinatus tear. Refer for injection.")

    busy = open_day(today, 0)
    for slug, staff_key in (("northside", "sam"), ("harbour", "tess")):
        for index, practitioner in enumerate(practitioners[slug]):
            for slot in range(5):
                hour, minute = 9 + slot, 30 * (index % 2)
                status = ("checked_in", "booked", "booked", "in_room", "booked")[slot] if slot < 2 or index == 0 else "booked"
                appointment(slug, rng.choice(imported[slug]), practitioner, at(busy, hour, minute), rng.choice(REASONS), status)
        for offset in (-4, -3, -2, -1, 1, 4, 5):
            day = open_day(today, offset)
            for practitioner in practitioners[slug]:
                status = "attended" if offset < 0 else "booked"
                appointment(slug, rng.choice(imported[slug]), practitioner, at(day, 10 + offset % 3, 30), rng.choice(REASONS), status)
        conn.execute(
            "INSERT INTO audit_log (clinic_id, actor_id, action, detail, created_at) VALUES (?, ?, 'staff.signed_in', 'desk terminal 1', ?)",
            (clinic_ids[slug], users[staff_key], created),
        )
