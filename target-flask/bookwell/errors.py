import traceback

from flask import current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException


def wants_json():
    return request.path.startswith("/api/")


def init_app(app):
    @app.errorhandler(HTTPException)
    def http_error(error):
        if wants_json():
            return jsonify(error=error.description), error.code
        return render_template("errors/http.html", error=error), error.code

    @app.errorhandler(500)
    def server_error(error):
        original = getattr(error, "original_exception", None) or error
        detail = "".join(traceback.format_exception(type(original), original, original.__traceback__))
        current_app.logger.error("unhandled error on %s %s\n%s", request.method, request.path, detail)
        if wants_json():
            return jsonify(error="Something went wrong", detail=detail), 500
        return render_template("errors/500.html", detail=detail), 500
