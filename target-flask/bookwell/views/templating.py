from datetime import datetime

from markupsafe import Markup


def money(cents):
    return f"£{(cents or 0) / 100:.2f}"


def multiline(text):
    return Markup((text or "").replace("\n", "<br>"))


def when(starts_at):
    try:
        moment = datetime.strptime(starts_at, "%Y-%m-%dT%H:%M")
    except (TypeError, ValueError):
        return starts_at
    return moment.strftime("%a %d %b %Y, %H:%M")


STATUS_LABELS = {
    "booked": "Booked",
    "checked_in": "Checked in",
    "in_room": "With practitioner",
    "attended": "Attended",
    "no_show": "Did not attend",
    "cancelled": "Cancelled",
}


def init_app(app):
    app.add_template_filter(money)
    app.add_template_filter(multiline)
    app.add_template_filter(when)
    app.add_template_filter(lambda status: STATUS_LABELS.get(status, status), "status_label")
