import re
from html.parser import HTMLParser

from helpers import APP_ROOT, BookwellCase, open_weekday


class Buttons(HTMLParser):
    """Collects each button's attributes and the text a screen reader would announce for it."""

    def __init__(self):
        super().__init__()
        self.buttons, self._open = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "button":
            self._open = {"attrs": dict(attrs), "text": ""}
        elif self._open is not None and tag in ("svg", "img"):
            attrs = dict(attrs)
            self._open["text"] += attrs.get("aria-label", "") + attrs.get("alt", "")

    def handle_data(self, data):
        if self._open is not None:
            self._open["text"] += data.strip()

    def handle_endtag(self, tag):
        if tag == "button" and self._open is not None:
            self.buttons.append(self._open)
            self._open = None


class UiDefects(BookwellCase):
    def test_CLIN_60_the_reschedule_link_on_an_appointment_leads_to_a_404(self):
        client = self.sign_in("paula")
        appointment = self.appointment_of("paula")
        page = self.text(client, f"/my/appointments/{appointment['id']}")
        link = re.search(r'href="([^"]+)">Reschedule<', page).group(1)
        self.assertEqual(link, f"/my/appointments/{appointment['id']}/reschedule")
        self.assertEqual(client.get(link).status_code, 404)

    def test_CLIN_61_the_new_password_form_posts_to_a_route_that_does_not_exist(self):
        client = self.client()
        client.post("/account/password-reset", data={
            "csrf_token": self.csrf(client, "/account/password-reset"), "email": "paula@mail.test"})
        token = self.sql("SELECT reset_token FROM users WHERE email = 'paula@mail.test'")[0][0]
        page = self.text(client, f"/account/password-reset/{token}")
        action = re.search(r'<form method="post" action="([^"]+)"', page).group(1)
        self.assertNotEqual(action, f"/account/password-reset/{token}")
        submitted = client.post(action, data={"csrf_token": self.csrf(client, f"/account/password-reset/{token}"),
                                              "password": "A-brand-new-password"})
        self.assertEqual(submitted.status_code, 404)

    def test_CLIN_62_day_sheet_action_buttons_have_no_accessible_name(self):
        client = self.sign_in("sam")
        parser = Buttons()
        parser.feed(self.text(client, f"/desk/?date={open_weekday(0)}"))
        actions = [b for b in parser.buttons if "data-status" in b["attrs"]]
        self.assertGreater(len(actions), 0)
        for button in actions:
            self.assertEqual(button["text"], "")
            self.assertFalse({"aria-label", "aria-labelledby", "title"} & set(button["attrs"]))

    def test_CLIN_63_patient_pages_throw_a_type_error_looking_for_the_credit_balance(self):
        client = self.sign_in("paula")
        script = (APP_ROOT / "bookwell" / "static" / "portal.js").read_text(encoding="utf-8")
        self.assertIn('document.getElementById("credit-balance").textContent', script)
        self.assertIn('id="credit-balance"', self.text(client, "/my/profile"))
        for path in ("/my/appointments", "/my/appointments/new"):
            page = self.text(client, path)
            self.assertIn("/static/portal.js", page, path)
            self.assertNotIn('id="credit-balance"', page, path)

    def test_CLIN_64_the_cancellation_confirmation_is_a_dead_end(self):
        client = self.sign_in("paula")
        appointment = self.appointment_of("paula")
        response = client.post(f"/my/appointments/{appointment['id']}/cancel",
                               data={"csrf_token": self.csrf(client, f"/my/appointments/{appointment['id']}")})
        page = self.text(client, response.headers["Location"])
        self.assertIn("Your appointment is cancelled", page)
        self.assertNotIn("<a ", page)
        self.assertNotIn("<nav", page)
        self.assertNotIn("<form", page)
