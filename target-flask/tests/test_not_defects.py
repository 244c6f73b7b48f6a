import ast
import re
from urllib.parse import quote

from flask import Flask

from bookwell.services.accounts import PROFILE_FIELDS
from bookwell.views import register_views
from helpers import APP_ROOT, EMAILS, BookwellCase, open_weekday


class NotDefects(BookwellCase):
    def test_CLIN_N1_clinic_pages_are_public_on_purpose(self):
        client = self.client()
        for path in ("/", "/clinics/northside"):
            response = client.get(path)
            self.assertEqual(response.status_code, 200, path)
        page = self.text(client, "/clinics/northside")
        self.assertIn("Priya Natarajan", page)
        self.assertNotIn("@", re.sub(r"<[^>]+>", "", page.split("<main>")[1].split("</main>")[0]))

    def test_CLIN_N2_day_sheet_order_by_is_built_from_an_allow_list(self):
        client = self.sign_in("sam")
        day = open_weekday(0)
        plain = client.get(f"/api/desk/appointments?date={day}").get_json()
        with self.statements() as seen:
            hostile = client.get(f"/api/desk/appointments?date={day}&sort=" + quote("starts_at; DROP TABLE users--"))
        self.assertEqual(hostile.status_code, 200)
        self.assertEqual([a["id"] for a in hostile.get_json()["appointments"]], [a["id"] for a in plain["appointments"]])
        self.assertFalse([s for s in seen if "DROP" in s])
        by_status = client.get(f"/api/desk/appointments?date={day}&sort=status").get_json()["appointments"]
        self.assertEqual([a["status"] for a in by_status], sorted(a["status"] for a in by_status))

    def test_CLIN_N3_only_managers_may_add_team_members(self):
        for name in ("sam", "paula"):
            client = self.sign_in(name)
            response = client.post("/admin/staff", data={
                "csrf_token": self.csrf(client, "/my/profile" if name == "paula" else "/desk/"),
                "name": "Mallory", "email": f"mallory-{name}@evil.test", "role": "admin", "password": "Long-enough-pass",
            })
            self.assertEqual(response.status_code, 403, name)
            self.assertEqual(client.get("/admin/").status_code, 403, name)
        manager = self.sign_in("maria")
        response = manager.post("/admin/staff", data={
            "csrf_token": self.csrf(manager, "/admin/"), "name": "Nina Park", "email": "nina@northside.test",
            "role": "staff", "password": "Long-enough-pass",
        })
        self.assertEqual(response.status_code, 302)
        self.assertEqual(self.sql("SELECT COUNT(*) FROM users WHERE email LIKE 'mallory%'")[0][0], 0)
        self.assertEqual(self.sql("SELECT role FROM users WHERE email = 'nina@northside.test'")[0][0], "staff")

    def test_CLIN_N4_the_clinic_search_prints_the_query_back_escaped(self):
        page = self.text(self.client(), "/clinics?q=" + quote('<script>alert("x")</script>'))
        self.assertIn("&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;", page)
        self.assertNotIn("<script>alert", page)

    def test_CLIN_N5_sign_out_only_follows_same_site_paths(self):
        for target, expected in (("//evil.example/x", "/"), ("https://evil.example/x", "/"),
                                 ("/\\evil.example", "/"), ("/clinics", "/clinics")):
            client = self.sign_in("paula")
            response = client.post("/account/sign-out", data={
                "csrf_token": self.csrf(client, "/my/profile"), "next": target})
            self.assertEqual(response.status_code, 302, target)
            self.assertEqual(response.headers["Location"], expected, target)

    def test_CLIN_N6_the_desk_channel_refuses_sockets_without_a_desk_session(self):
        self.assertFalse(self.socket("/desk").is_connected("/desk"))
        self.assertFalse(self.socket("/desk", self.sign_in("paula")).is_connected("/desk"))
        self.assertTrue(self.socket("/desk", self.sign_in("sam")).is_connected("/desk"))

    def test_CLIN_N7_the_test_reset_route_exists_only_when_switched_on(self):
        bare = Flask("bookwell_probe", root_path=str(APP_ROOT / "bookwell"))
        bare.config["TEST_RESET"] = False
        register_views(bare)
        self.assertNotIn("/__test/reset", {rule.rule for rule in bare.url_map.iter_rules()})
        self.assertEqual(self.client().post("/__test/reset").status_code, 200)

    def test_CLIN_N8_health_is_public_and_says_only_ok(self):
        response = self.client().get("/health")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.get_json(), {"status": "ok"})

    def test_CLIN_N9_another_clinics_appointment_page_answers_404(self):
        appointment = self.appointment_of("paula")
        self.assertEqual(self.sign_in("sam").get(f"/desk/appointments/{appointment['id']}").status_code, 200)
        self.assertEqual(self.sign_in("tess").get(f"/desk/appointments/{appointment['id']}").status_code, 404)

    def test_CLIN_N10_another_patients_appointment_answers_404(self):
        appointment = self.appointment_of("paula")
        self.assertEqual(self.sign_in("peter").get(f"/my/appointments/{appointment['id']}").status_code, 404)
        self.assertEqual(self.sign_in("paula").get(f"/my/appointments/{appointment['id']}").status_code, 200)

    def test_CLIN_N11_the_own_profile_endpoint_returns_allow_listed_fields_only(self):
        anonymous = self.client()
        anonymous.post("/account/password-reset", data={
            "csrf_token": self.csrf(anonymous, "/account/password-reset"), "email": EMAILS["paula"]})
        self.assertIsNotNone(self.sql("SELECT reset_token FROM users WHERE email = ?", (EMAILS["paula"],))[0][0])
        me = self.sign_in("paula").get("/api/me").get_json()
        self.assertEqual(set(me["user"]), set(PROFILE_FIELDS))
        self.assertNotIn("pbkdf2", str(me))

    def test_CLIN_N12_my_appointments_runs_the_same_queries_however_many_appointments(self):
        client = self.sign_in("paula")
        with self.statements() as before:
            client.get("/my/appointments")
        practitioner = self.appointment_of("paula")["practitioner_id"]
        token = self.csrf(client, "/my/appointments/new")
        for hour in ("13:00", "13:30", "14:00", "14:30"):
            client.post("/my/appointments/new", data={
                "csrf_token": token, "practitioner_id": practitioner, "date": open_weekday(4).isoformat(), "time": hour})
        with self.statements() as after:
            page = client.get("/my/appointments").get_data(as_text=True)
        self.assertEqual(page.count('class="appointment"'), 5)
        self.assertEqual(len(after), len(before))

    def test_CLIN_N14_the_waiting_room_display_is_a_kiosk_page_without_navigation(self):
        team = self.text(self.sign_in("maria"), "/admin/")
        link = re.search(r'href="(/clinics/northside/display\?key=[^"]+)"', team).group(1)
        page = self.text(self.client(), link)
        self.assertIn('id="waiting"', page)
        self.assertNotIn("<a ", page)
        self.assertEqual(self.client().get("/clinics/northside/display?key=guess").status_code, 404)

    def test_CLIN_N13_seed_data_is_a_large_module_of_plain_data(self):
        tree = ast.parse((APP_ROOT / "bookwell" / "seed_data.py").read_text(encoding="utf-8"))
        self.assertTrue(all(isinstance(node, ast.Assign) for node in tree.body))
