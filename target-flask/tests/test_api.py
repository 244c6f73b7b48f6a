from datetime import date, timedelta

from helpers import BookwellCase, next_sunday, open_weekday


class ApiDefects(BookwellCase):
    def first_practitioner(self, clinic_id=1):
        return self.sql("SELECT id FROM practitioners WHERE clinic_id = ? ORDER BY id LIMIT 1", (clinic_id,))[0]["id"]

    def test_CLIN_01_free_slots_for_a_sunday_crash_with_500(self):
        client = self.sign_in("paula")
        practitioner = self.first_practitioner()
        weekday = client.get(f"/api/clinics/northside/slots?practitioner={practitioner}&date={open_weekday(1)}")
        self.assertEqual(weekday.status_code, 200)
        self.assertIsInstance(weekday.get_json()["times"], list)
        sunday = client.get(f"/api/clinics/northside/slots?practitioner={practitioner}&date={next_sunday()}")
        self.assertEqual(sunday.status_code, 500)
        self.assertIn("KeyError", sunday.get_json()["detail"])

    def test_CLIN_02_unknown_status_is_refused_with_200_and_an_error_body(self):
        client = self.sign_in("sam")
        appointment = self.appointment_of("paula")
        response = client.post(
            f"/api/desk/appointments/{appointment['id']}/status",
            json={"status": "teleported"},
            headers={"X-CSRF-Token": self.csrf(client, "/desk/")},
        )
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.get_json()["ok"], False)
        self.assertEqual(self.sql("SELECT status FROM appointments WHERE id = ?", (appointment["id"],))[0][0], "booked")

    def test_CLIN_03_patients_can_book_in_the_past_and_outside_opening_hours(self):
        client = self.sign_in("paula")
        yesterday = date.today() - timedelta(days=1)
        response = client.post("/my/appointments/new", data={
            "csrf_token": self.csrf(client, "/my/appointments/new"),
            "practitioner_id": self.first_practitioner(),
            "date": yesterday.isoformat(), "time": "03:10", "reason": "night visit",
        })
        self.assertEqual(response.status_code, 302)
        booked = self.sql("SELECT status FROM appointments WHERE starts_at = ?", (f"{yesterday}T03:10",))
        self.assertEqual([row["status"] for row in booked], ["booked"])

    def test_CLIN_04_audit_log_with_per_page_zero_crashes_with_500(self):
        client = self.sign_in("maria")
        self.assertEqual(client.get("/admin/audit?per_page=10").status_code, 200)
        response = client.get("/admin/audit?per_page=0")
        self.assertEqual(response.status_code, 500)
        self.assertIn("ZeroDivisionError", response.get_data(as_text=True))

    def test_CLIN_05_json_endpoints_redirect_anonymous_callers_to_the_sign_in_page(self):
        client = self.client()
        for path in ("/api/me", "/api/desk/appointments", "/api/desk/patients/search?q=a",
                     f"/api/clinics/northside/slots?practitioner=1&date={open_weekday(1)}"):
            response = client.get(path)
            self.assertEqual(response.status_code, 302, path)
            self.assertIn("/account/sign-in", response.headers["Location"], path)
            self.assertNotEqual(response.mimetype, "application/json", path)
