import functools
import hmac
import secrets
from urllib.parse import urlsplit

from flask import abort, g, redirect, request, session, url_for

from .services import accounts

CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"


def init_app(app):
    app.before_request(load_current_user)
    app.jinja_env.globals["csrf_token"] = csrf_token


def load_current_user():
    user_id = session.get("user_id")
    g.user = accounts.get_active(user_id) if user_id is not None else None


def sign_in(user):
    session.clear()
    session["user_id"] = user["id"]


def csrf_token():
    if "_csrf" not in session:
        session["_csrf"] = secrets.token_urlsafe(32)
    return session["_csrf"]


def csrf_protect(view):
    @functools.wraps(view)
    def checked(*args, **kwargs):
        sent = request.form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER, "")
        expected = session.get("_csrf", "")
        if not expected or not hmac.compare_digest(sent, expected):
            abort(400, description="This form has expired. Reload the page and try again.")
        return view(*args, **kwargs)

    return checked


def login_required(view):
    @functools.wraps(view)
    def checked(*args, **kwargs):
        if g.user is None:
            return redirect(url_for("account.sign_in", next=request.full_path.rstrip("?")))
        return view(*args, **kwargs)

    return checked


def roles_required(*roles):
    def decorate(view):
        @functools.wraps(view)
        @login_required
        def checked(*args, **kwargs):
            if g.user["role"] not in roles:
                abort(403)
            return view(*args, **kwargs)

        return checked

    return decorate


def is_local_path(target):
    if not target or "\\" in target or not target.startswith("/"):
        return False
    parts = urlsplit(target)
    return not parts.scheme and not parts.netloc


def home_for(user):
    if user is None:
        return url_for("public.home")
    if user["role"] == "patient":
        return url_for("portal.appointments")
    return url_for("desk.day_sheet")
