from flask import Blueprint, jsonify

from ..services import maintenance

bp = Blueprint("testing", __name__)


@bp.post("/__test/reset")
def reset():
    maintenance.restore_demo_data()
    return jsonify(status="reset")
