from flask import Blueprint, g, jsonify

from ...security import login_required
from ...services import accounts, billing

bp = Blueprint("me", __name__, url_prefix="/me")


@bp.get("")
@login_required
def me():
    return jsonify(user=accounts.profile(g.user), credit_cents=billing.credit(g.user["id"]))
