from bookwell import db
from helpers import BookwellCase


class DataDefects(BookwellCase):
    def register(self, email):
        client = self.client()
        return client.post("/account/register", data={
            "csrf_token": self.csrf(client, "/account/register"), "clinic": "northside", "name": "Paula Grant",
            "email": email, "password": "Another-Long-Password-1",
        })

    def test_CLIN_30_email_uniqueness_is_kept_only_in_code_which_ignores_case_and_profile_edits(self):
        self.assertEqual(self.register("paula@mail.test").status_code, 422)
        self.assertEqual(self.register("PAULA@mail.test").status_code, 302)
        same = self.sql("SELECT COUNT(*) FROM users WHERE lower(email) = 'paula@mail.test'")[0][0]
        self.assertEqual(same, 2)
        unique = [index["name"] for index in self.sql("PRAGMA index_list(users)") if index["unique"]]
        self.assertEqual(unique, [])
        client = self.sign_in("peter")
        client.post("/my/profile", data={"csrf_token": self.csrf(client, "/my/profile"),
                                         "email": "paula@mail.test", "phone": ""})
        self.assertEqual(self.sql("SELECT COUNT(*) FROM users WHERE email = 'paula@mail.test'")[0][0], 2)

    def test_CLIN_31_cancelling_twice_refunds_the_deposit_twice(self):
        client = self.sign_in("paula")
        appointment = self.appointment_of("paula")
        token = self.csrf(client, f"/my/appointments/{appointment['id']}")
        for _ in range(2):
            response = client.post(f"/my/appointments/{appointment['id']}/cancel", data={"csrf_token": token})
            self.assertEqual(response.status_code, 302)
        refunds = self.sql(
            "SELECT amount_cents FROM payments WHERE appointment_id = ? AND kind = 'refund'", (appointment["id"],)
        )
        self.assertEqual([row[0] for row in refunds], [2000, 2000])
        self.assertEqual(client.get("/api/me").get_json()["credit_cents"], 4000)

    def test_CLIN_32_the_desk_books_a_practitioner_twice_at_the_same_time(self):
        taken = self.appointment_of("paula")
        day, time = taken["starts_at"].split("T")
        patient = self.sign_in("peter")
        refused = patient.post("/my/appointments/new", data={
            "csrf_token": self.csrf(patient, "/my/appointments/new"),
            "practitioner_id": taken["practitioner_id"], "date": day, "time": time,
        })
        self.assertEqual(refused.status_code, 422)
        desk = self.sign_in("sam")
        response = desk.post("/desk/appointments/new", data={
            "csrf_token": self.csrf(desk, "/desk/appointments/new"), "patient_id": self.user_id("peter"),
            "practitioner_id": taken["practitioner_id"], "date": day, "time": time,
        })
        self.assertEqual(response.status_code, 302)
        active = self.sql(
            "SELECT COUNT(*) FROM appointments WHERE practitioner_id = ? AND starts_at = ? AND status != 'cancelled'",
            (taken["practitioner_id"], taken["starts_at"]),
        )[0][0]
        self.assertEqual(active, 2)

    def test_CLIN_33_foreign_keys_are_not_enforced_so_removing_a_practitioner_orphans_appointments(self):
        with self.app.app_context():
            self.assertEqual(db.get().execute("PRAGMA foreign_keys").fetchone()[0], 0)
        practitioner = self.appointment_of("paula")["practitioner_id"]
        client = self.sign_in("maria")
        response = client.post(f"/admin/practitioners/{practitioner}/delete",
                                data={"csrf_token": self.csrf(client, "/admin/practitioners")})
        self.assertEqual(response.status_code, 302)
        orphans = self.sql(
            "SELECT COUNT(*) FROM appointments LEFT JOIN practitioners ON practitioners.id = appointments.practitioner_id "
            "WHERE practitioners.id IS NULL"
        )[0][0]
        self.assertGreater(orphans, 0)
