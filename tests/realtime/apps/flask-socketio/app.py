"""A small multi-tenant notes service for the realtime tests, on Flask-SocketIO (gevent).

Run with Debian's /usr/bin/python3; it listens on 127.0.0.1 on a free port and prints the port.
The HTTP API is the same as the Node socket.io app's; its namespaces each behave one way:
  /        token in the handshake auth, events to the user's tenant room only   correct
  /leaky   token required, but every tenant's notes to every socket              (ws-authorization)
  /open    no authentication, every tenant's notes to everyone                   (ws-unauthenticated)
"""
from gevent import monkey

monkey.patch_all()

import secrets  # noqa: E402

from flask import Flask, jsonify, request  # noqa: E402
from flask_socketio import ConnectionRefusedError, SocketIO, join_room  # noqa: E402

app = Flask(__name__)
socketio = SocketIO(app, async_mode="gevent")

USERS = [
    {"id": 1, "name": "Alice Anders", "email": "alice@tenant-a.test", "tenant": "a", "password": "alice-pass-1"},
    {"id": 2, "name": "Bob Brennan", "email": "bob@tenant-b.test", "tenant": "b", "password": "bob-pass-2"},
]
TOKENS = {}
NOTES = {}


def signed_in():
    header = request.headers.get("Authorization", "")
    return TOKENS.get(header[len("Bearer "):]) if header.startswith("Bearer ") else None


def user_of(auth):
    return TOKENS.get((auth or {}).get("token", ""))


@app.get("/health")
def health():
    return jsonify(ok=True)


@app.post("/api/login")
def login():
    body = request.get_json(silent=True) or {}
    for user in USERS:
        if user["email"] == body.get("username") and user["password"] == body.get("password"):
            token = "tok-%d-%s" % (user["id"], secrets.token_hex(6))
            TOKENS[token] = user
            return jsonify(token=token, user={"id": user["id"], "name": user["name"], "email": user["email"]})
    return jsonify(error="bad credentials"), 401


@app.post("/api/notes")
def create_note():
    user = signed_in()
    if user is None:
        return jsonify(error="sign in"), 401
    body = request.get_json(silent=True) or {}
    note = {"id": len(NOTES) + 1, "title": str(body.get("title", "")), "body": str(body.get("body", "")),
            "tenant": user["tenant"]}
    NOTES[note["id"]] = note
    publish("note_created", note)
    return jsonify(note), 201


@app.route("/api/notes/<int:note_id>", methods=["GET", "PATCH"])
def note_item(note_id):
    user = signed_in()
    if user is None:
        return jsonify(error="sign in"), 401
    note = NOTES.get(note_id)
    if note is None or note["tenant"] != user["tenant"]:
        return jsonify(error="not found"), 404
    if request.method == "PATCH":
        body = request.get_json(silent=True) or {}
        for field in ("title", "body"):
            if isinstance(body.get(field), str):
                note[field] = body[field]
        publish("note_updated", note)
    return jsonify(note)


@socketio.on("connect")
def connect(auth):
    user = user_of(auth)
    if user is None:
        raise ConnectionRefusedError("unauthorized")
    join_room("tenant:" + user["tenant"])


@socketio.on("connect", namespace="/leaky")
def connect_leaky(auth):
    if user_of(auth) is None:
        raise ConnectionRefusedError("unauthorized")


@socketio.on("connect", namespace="/open")
def connect_open(auth):
    return True


def publish(event, note):
    socketio.emit(event, note, to="tenant:" + note["tenant"])
    socketio.emit(event, note, namespace="/leaky")
    socketio.emit(event, note, namespace="/open")


if __name__ == "__main__":
    from gevent import pywsgi
    from geventwebsocket.handler import WebSocketHandler

    server = pywsgi.WSGIServer(("127.0.0.1", 0), app, handler_class=WebSocketHandler, log=None)
    server.start()
    print(server.server_port, flush=True)
    server.serve_forever()
