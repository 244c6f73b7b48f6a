import re

from helpers import BookwellCase, open_weekday


class PerformanceDefects(BookwellCase):
    def test_CLIN_50_the_day_sheet_runs_two_queries_per_appointment(self):
        client = self.sign_in("sam")
        day = open_weekday(0).isoformat()
        with self.statements() as seen:
            sheet = client.get(f"/api/desk/appointments?date={day}").get_json()
        count = len(sheet["appointments"])
        self.assertGreaterEqual(count, 10)
        per_row = [s for s in seen if re.search(r"FROM (users|practitioners) WHERE id = \d+", s)]
        self.assertGreaterEqual(len(per_row), 2 * count)
        with self.statements() as page:
            client.get(f"/desk/?date={day}")
        self.assertGreaterEqual(len(page), 2 * count)

    def test_CLIN_51_patient_suggestions_return_every_patient_for_a_short_query(self):
        client = self.sign_in("sam")
        everyone = self.sql("SELECT COUNT(*) FROM users WHERE clinic_id = 1 AND role = 'patient'")[0][0]
        found = client.get("/api/desk/patients/search?q=").get_json()["patients"]
        self.assertGreater(everyone, 100)
        self.assertEqual(len(found), everyone)

    def test_CLIN_52_sign_in_looks_users_up_with_lower_email_and_scans_the_table(self):
        with self.statements() as seen:
            self.sign_in("paula")
        lookup = next(s for s in seen if "lower(email)" in s)
        plan = " ".join(row[3] for row in self.sql("EXPLAIN QUERY PLAN " + lookup))
        self.assertIn("SCAN users", plan)
        indexed = " ".join(row[3] for row in self.sql("EXPLAIN QUERY PLAN SELECT * FROM users WHERE email = 'x'"))
        self.assertIn("USING INDEX users_email", indexed)
