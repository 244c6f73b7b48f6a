from flask import Blueprint, abort, flash, g, redirect, render_template, request, session, url_for

from .. import security
from ..services import accounts, clinics
from ..services.accounts import MIN_PASSWORD_LENGTH

bp = Blueprint("account", __name__)


def _after_sign_in(target):
    if target and target.startswith("/"):
        return target
    return security.home_for(g.user)


@bp.route("/sign-in", methods=["GET", "POST"])
def sign_in():
    next_url = request.values.get("next", "")
    if request.method == "GET":
        if g.user is not None:
            return redirect(_after_sign_in(next_url))
        return render_template("account/sign_in.html", next=next_url)
    return _submit_sign_in(next_url)


@security.csrf_protect
def _submit_sign_in(next_url):
    user = accounts.authenticate(request.form.get("email", ""), request.form.get("password", ""))
    if user is None:
        return render_template(
            "account/sign_in.html", next=next_url, error="Email or password is incorrect.",
            email=request.form.get("email", ""),
        )
    security.sign_in(user)
    g.user = user
    return redirect(_after_sign_in(next_url))


@bp.post("/sign-out")
@security.csrf_protect
def sign_out():
    session.clear()
    target = request.form.get("next", "")
    return redirect(target if security.is_local_path(target) else url_for("public.home"))


@bp.route("/register", methods=["GET", "POST"])
def register():
    choices = clinics.all_clinics()
    if request.method == "GET":
        return render_template("account/register.html", clinics=choices, form={})
    return _submit_registration(choices)


@security.csrf_protect
def _submit_registration(choices):
    form = request.form
    clinic = clinics.by_slug(form.get("clinic", ""))
    errors = []
    if clinic is None:
        errors.append("Choose your clinic.")
    if not form.get("name", "").strip():
        errors.append("Enter your name.")
    if "@" not in form.get("email", ""):
        errors.append("Enter a valid email address.")
    elif accounts.email_taken(form["email"]):
        errors.append("An account with this email already exists. Sign in instead.")
    if len(form.get("password", "")) < MIN_PASSWORD_LENGTH:
        errors.append(f"Choose a password of at least {MIN_PASSWORD_LENGTH} characters.")
    if errors:
        return render_template("account/register.html", clinics=choices, form=form, errors=errors), 422
    user_id = accounts.create(
        clinic["id"], form["name"], form["email"], form["password"], "patient",
        phone=form.get("phone") or None, date_of_birth=form.get("date_of_birth") or None,
    )
    security.sign_in(accounts.get(user_id))
    flash("Welcome to Bookwell. You can book your first appointment now.")
    return redirect(url_for("portal.appointments"))


@bp.route("/password-reset", methods=["GET", "POST"])
def password_reset():
    if request.method == "GET":
        return render_template("account/reset_request.html")
    return _submit_reset_request()


@security.csrf_protect
def _submit_reset_request():
    email = request.form.get("email", "")
    if accounts.start_password_reset(email) is None:
        return render_template(
            "account/reset_request.html", email=email,
            error="We couldn't find an account with that email address.",
        )
    return render_template("account/reset_request.html", sent=True)


@bp.get("/password-reset/<token>")
def choose_password(token):
    if accounts.user_for_reset(token) is None:
        abort(404)
    return render_template("account/reset_form.html", token=token)


@bp.post("/password-reset/<token>")
@security.csrf_protect
def save_password(token):
    password = request.form.get("password", "")
    if len(password) < MIN_PASSWORD_LENGTH:
        return render_template(
            "account/reset_form.html", token=token,
            error=f"Choose a password of at least {MIN_PASSWORD_LENGTH} characters.",
        ), 422
    if not accounts.finish_password_reset(token, password):
        abort(404)
    flash("Your password has been changed. Sign in with your new password.")
    return redirect(url_for("account.sign_in"))
