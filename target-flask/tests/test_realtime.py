from helpers import BookwellCase, events


class RealtimeDefects(BookwellCase):
    def book_as_paula(self, time="16:30"):
        client = self.sign_in("paula")
        appointment = self.appointment_of("paula")
        day = appointment["starts_at"][:10]
        response = client.post("/my/appointments/new", data={
            "csrf_token": self.csrf(client, "/my/appointments/new"),
            "practitioner_id": appointment["practitioner_id"], "date": day, "time": time, "reason": "Ankle",
        })
        self.assertEqual(response.status_code, 302)
        return day

    def test_CLIN_40_the_waiting_room_channel_streams_patient_names_without_a_session_or_key(self):
        self.assertEqual(self.client().get("/clinics/harbour/display").status_code, 404)
        lobby = self.socket("/waiting-room")
        self.assertTrue(lobby.is_connected("/waiting-room"))
        lobby.get_received("/waiting-room")
        self.assertEqual(lobby.emit("watch", {"clinic": "harbour"}, namespace="/waiting-room", callback=True), {"ok": True})
        queue = events(lobby, "/waiting-room", "queue")[0][0]
        self.assertEqual(queue["clinic"], "harbour")
        self.assertGreater(len(queue["waiting"]), 0)
        self.assertRegex(queue["waiting"][0]["patient"], r"^\w+ \w+$")

    def test_CLIN_41_desk_staff_watch_another_clinics_day_by_sending_its_id(self):
        day = self.appointment_of("paula")["starts_at"][:10]
        other_clinic = self.socket("/desk", self.sign_in("tess"))
        self.assertTrue(other_clinic.is_connected("/desk"))
        reply = other_clinic.emit("watch_day", {"clinic_id": 1, "date": day}, namespace="/desk", callback=True)
        self.assertEqual(reply["ok"], True)
        other_clinic.get_received("/desk")
        self.book_as_paula()
        booked = events(other_clinic, "/desk", "appointment_booked")
        self.assertEqual([args[0]["patient"] for args in booked], ["Paula Grant"])
        self.assertEqual(booked[0][0]["clinic_id"], 1)

    def test_CLIN_42_cancellations_are_pushed_to_the_desks_of_every_clinic(self):
        other_clinic = self.socket("/desk", self.sign_in("tess"))
        other_clinic.get_received("/desk")
        client = self.sign_in("paula")
        appointment = self.appointment_of("paula")
        client.post(f"/my/appointments/{appointment['id']}/cancel",
                    data={"csrf_token": self.csrf(client, f"/my/appointments/{appointment['id']}")})
        cancelled = events(other_clinic, "/desk", "appointment_cancelled")
        self.assertEqual(len(cancelled), 1)
        self.assertEqual(cancelled[0][0]["patient"], "Paula Grant")
        self.assertEqual(cancelled[0][0]["reason"], "Knee pain after running")
