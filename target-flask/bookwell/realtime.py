from flask import session
from flask_socketio import SocketIO, emit, join_room

from .services import accounts, appointments, clinics

DESK = "/desk"
WAITING_ROOM = "/waiting-room"
DESK_ROLES = ("staff", "admin")

socketio = SocketIO()


def clinic_room(clinic_id):
    return f"clinic:{clinic_id}"


def day_room(clinic_id, day):
    return f"clinic:{clinic_id}:{day}"


def lobby_room(clinic_id):
    return f"lobby:{clinic_id}"


def payload(appointment):
    return {
        "id": appointment["id"],
        "clinic_id": appointment["clinic_id"],
        "starts_at": appointment["starts_at"],
        "status": appointment["status"],
        "patient": appointment["patient_name"],
        "practitioner": appointment["practitioner_name"],
        "reason": appointment["reason"],
    }


def _desk_user():
    user_id = session.get("user_id")
    user = accounts.get_active(user_id) if user_id is not None else None
    return user if user is not None and user["role"] in DESK_ROLES else None


@socketio.on("connect", namespace=DESK)
def desk_connected(auth=None):
    user = _desk_user()
    if user is None:
        return False
    join_room(clinic_room(user["clinic_id"]))
    emit("ready", {"clinic_id": user["clinic_id"], "name": user["name"]})


@socketio.on("watch_day", namespace=DESK)
def watch_day(data):
    data = data if isinstance(data, dict) else {}
    try:
        clinic_id = int(data.get("clinic_id"))
    except (TypeError, ValueError):
        return {"ok": False, "error": "clinic_id is required"}
    room = day_room(clinic_id, str(data.get("date", "")))
    join_room(room)
    return {"ok": True, "room": room}


@socketio.on("connect", namespace=WAITING_ROOM)
def lobby_connected(auth=None):
    emit("ready", {})


@socketio.on("watch", namespace=WAITING_ROOM)
def watch_lobby(data):
    data = data if isinstance(data, dict) else {}
    clinic = clinics.by_slug(str(data.get("clinic", "")))
    if clinic is None:
        return {"ok": False, "error": "unknown clinic"}
    join_room(lobby_room(clinic["id"]))
    emit("queue", {"clinic": clinic["slug"], "waiting": appointments.waiting_queue(clinic["id"])})
    return {"ok": True}


def appointment_booked(appointment):
    socketio.emit(
        "appointment_booked",
        payload(appointment),
        namespace=DESK,
        to=day_room(appointment["clinic_id"], appointment["starts_at"][:10]),
    )


def appointment_status(appointment):
    socketio.emit(
        "appointment_status",
        payload(appointment),
        namespace=DESK,
        to=day_room(appointment["clinic_id"], appointment["starts_at"][:10]),
    )
    socketio.emit(
        "queue",
        {"clinic": appointment["clinic_slug"], "waiting": appointments.waiting_queue(appointment["clinic_id"])},
        namespace=WAITING_ROOM,
        to=lobby_room(appointment["clinic_id"]),
    )


def appointment_cancelled(appointment):
    socketio.emit("appointment_cancelled", payload(appointment), namespace=DESK)
