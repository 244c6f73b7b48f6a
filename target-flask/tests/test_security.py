import re
from urllib.parse import quote

from flask import Flask

from bookwell.config import load_config
from helpers import EMAILS, BookwellCase


def tbody(html):
    return re.search(r"<tbody>(.*?)</tbody>", html, re.S).group(1)


class SecurityDefects(BookwellCase):
    def test_CLIN_10_patient_search_is_injectable_through_its_like_pattern(self):
        client = self.sign_in("sam")
        broken = client.get("/desk/patients?q=" + quote("O'Brien"))
        self.assertEqual(broken.status_code, 500)
        self.assertIn("OperationalError", broken.get_data(as_text=True))
        self.assertNotIn(EMAILS["quinn"], client.get("/desk/patients?q=Quinn").get_data(as_text=True))
        injected = client.get("/desk/patients?q=" + quote("Q') OR (clinic_id = 2 AND name LIKE '"))
        page = injected.get_data(as_text=True)
        self.assertEqual(injected.status_code, 200)
        self.assertIn(EMAILS["quinn"], page)
        self.assertIn(EMAILS["hank"], page)

    def test_CLIN_11_payments_sort_key_is_injected_into_order_by(self):
        client = self.sign_in("maria")
        for column in ("created_at", "amount_cents", "patient_name", "starts_at"):
            self.assertEqual(client.get(f"/admin/payments?sort={column}").status_code, 200, column)
        self.assertEqual(client.get("/admin/payments?sort=no_such_column").status_code, 500)
        ascending = tbody(client.get("/admin/payments?sort=id&dir=asc").get_data(as_text=True))
        descending = tbody(client.get("/admin/payments?sort=id&dir=desc").get_data(as_text=True))
        probe = ("(CASE WHEN (SELECT substr(password_hash, 1, 6) FROM users WHERE email = 'hank@harbour.test') "
                 "= '{guess}' THEN id ELSE -id END)")
        right = client.get("/admin/payments?dir=asc&sort=" + quote(probe.format(guess="pbkdf2")))
        wrong = client.get("/admin/payments?dir=asc&sort=" + quote(probe.format(guess="bcrypt")))
        self.assertNotEqual(ascending, descending)
        self.assertEqual(tbody(right.get_data(as_text=True)), ascending)
        self.assertEqual(tbody(wrong.get_data(as_text=True)), descending)

    def test_CLIN_12_a_patient_reads_any_document_through_their_own_appointment(self):
        client = self.sign_in("paula")
        own = self.appointment_of("paula")
        scan = self.sql("SELECT id, appointment_id FROM documents WHERE title = 'Scan report'")[0]
        self.assertEqual(client.get(f"/my/appointments/{scan['appointment_id']}").status_code, 404)
        response = client.get(f"/my/appointments/{own['id']}/documents/{scan['id']}")
        self.assertEqual(response.status_code, 200)
        self.assertIn("supraspinatus", response.get_data(as_text=True))

    def test_CLIN_13_staff_of_one_clinic_change_the_status_of_another_clinics_appointment(self):
        client = self.sign_in("tess")
        appointment = self.appointment_of("paula")
        self.assertEqual(client.get(f"/desk/appointments/{appointment['id']}").status_code, 404)
        response = client.post(
            f"/api/desk/appointments/{appointment['id']}/status",
            json={"status": "no_show"},
            headers={"X-CSRF-Token": self.csrf(client, "/desk/")},
        )
        self.assertEqual(response.get_json()["ok"], True)
        self.assertEqual(self.sql("SELECT status FROM appointments WHERE id = ?", (appointment["id"],))[0][0], "no_show")

    def test_CLIN_14_any_signed_in_patient_reads_the_audit_log(self):
        client = self.sign_in("paula")
        self.assertEqual(client.get("/admin/payments").status_code, 403)
        response = client.get("/admin/audit")
        self.assertEqual(response.status_code, 200)
        self.assertIn("appointment.booked", response.get_data(as_text=True))

    def test_CLIN_15_profile_changes_are_accepted_without_a_csrf_token(self):
        client = self.sign_in("paula")
        paula = self.user_id("paula")
        appointment = self.appointment_of("paula")
        self.assertEqual(client.post(f"/my/appointments/{appointment['id']}/cancel").status_code, 400)
        response = client.post("/my/profile", data={"email": "attacker@evil.test", "phone": "0"})
        self.assertEqual(response.status_code, 302)
        self.assertEqual(self.sql("SELECT email FROM users WHERE id = ?", (paula,))[0][0], "attacker@evil.test")

    def test_CLIN_16_sign_in_follows_a_protocol_relative_next_url(self):
        absolute = self.submit_sign_in(self.client(), "paula", "https://evil.example/phish")
        self.assertEqual(absolute.headers["Location"], "/my/appointments")
        relative = self.submit_sign_in(self.client(), "paula", "//evil.example/phish")
        self.assertEqual(relative.status_code, 302)
        self.assertEqual(relative.headers["Location"], "//evil.example/phish")

    def test_CLIN_17_a_patients_booking_reason_runs_as_html_on_the_desk(self):
        patient = self.sign_in("paula")
        payload = '<img src=x onerror="alert(document.cookie)">'
        appointment = self.appointment_of("paula")
        day = appointment["starts_at"][:10]
        patient.post("/my/appointments/new", data={
            "csrf_token": self.csrf(patient, "/my/appointments/new"),
            "practitioner_id": appointment["practitioner_id"], "date": day, "time": "16:00", "reason": payload,
        })
        booked = self.sql("SELECT id FROM appointments WHERE reason = ?", (payload,))[0]["id"]
        desk = self.sign_in("sam")
        self.assertIn(payload, self.text(desk, f"/desk/?date={day}"))
        self.assertIn(payload, self.text(desk, f"/desk/appointments/{booked}"))

    def test_CLIN_18_password_reset_tells_whether_an_email_has_an_account(self):
        client = self.client()
        unknown = client.post("/account/password-reset", data={
            "csrf_token": self.csrf(client, "/account/password-reset"), "email": "nobody@mail.test"})
        known = client.post("/account/password-reset", data={
            "csrf_token": self.csrf(client, "/account/password-reset"), "email": EMAILS["paula"]})
        self.assertIn("couldn&#39;t find an account", unknown.get_data(as_text=True))
        self.assertIn("We have emailed you a link", known.get_data(as_text=True))

    def test_CLIN_19_patient_lookup_returns_the_password_hash_and_reset_token(self):
        patient = self.client()
        patient.post("/account/password-reset", data={
            "csrf_token": self.csrf(patient, "/account/password-reset"), "email": EMAILS["paula"]})
        desk = self.sign_in("sam")
        found = desk.get(f"/api/desk/patients/lookup?email={EMAILS['paula']}").get_json()["patient"]
        self.assertTrue(found["password_hash"].startswith("pbkdf2:sha256:"))
        self.assertTrue(found["reset_token"])
        self.assertEqual(desk.get(f"/account/password-reset/{found['reset_token']}").status_code, 200)

    def test_CLIN_20_server_errors_show_the_stack_trace(self):
        client = self.sign_in("sam")
        page = self.text(client, "/desk/patients?q=" + quote("O'Brien"))
        self.assertIn("Traceback (most recent call last)", page)
        self.assertIn("bookwell/services/patients.py", page)

    def test_CLIN_22_pages_are_served_without_basic_security_headers(self):
        response = self.client().get("/")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.mimetype, "text/html")
        for header in ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options"):
            self.assertNotIn(header, response.headers, header)

    def test_CLIN_21_session_cookies_signed_with_the_built_in_key_are_accepted(self):
        default_key = load_config({})["SECRET_KEY"]
        self.assertEqual(self.app.config["SECRET_KEY"], default_key)
        forger = Flask("forger")
        forger.secret_key = default_key
        cookie = forger.session_interface.get_signing_serializer(forger).dumps({"user_id": self.user_id("maria")})
        client = self.client()
        client.set_cookie("localhost", "session", cookie)
        response = client.get("/admin/")
        self.assertEqual(response.status_code, 200)
        self.assertIn("Add a team member", response.get_data(as_text=True))
