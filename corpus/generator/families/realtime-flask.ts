import { pyRoute } from "../code.ts";
import type { BuildContext } from "../endpoint.ts";
import type { Admission, ChannelPlace, Delivery } from "./realtime-channel.ts";

// The Flask side of a realtime variant: a Flask-SocketIO namespace. The Flask servers keep Werkzeug's
// threaded server (the timing and concurrency every other family is measured under), so Flask-SocketIO runs
// in `threading` mode: without simple-websocket (not packaged) its clients talk Engine.IO long-polling, as
// a Flask-SocketIO deployment without a WebSocket-capable server does. Plain WebSocket channels and
// backpressure (which needs a socket a client can stop reading) therefore live on the Fastify servers.

/** Emitted once in a Flask app with channels, after `app` exists. */
export const PYTHON_REALTIME_PRELUDE = `import threading

from flask_socketio import SocketIO, emit

# One Flask-SocketIO server on the app; each channel is a namespace of it.
socketio = SocketIO(app, async_mode="threading", cors_allowed_origins=[])`;

export interface FlaskChannelSpec {
  admission: Admission;
  delivery: Delivery;
  /** Python run by the publisher with `message` in scope (`message["seq"] = ...`). */
  stamp?: string;
  /** Replaces the direct delivery: a top-level `def deliver_<id>(message, admit)`. */
  deliver?: string;
  /** Run in the connect handler with `user`, `admit_new(admit)`, `reply(message)` and `since` in scope. */
  onSubscribe?: string;
}

function identify(admission: Admission, ctx: BuildContext): string {
  const { ph } = ctx;
  if (admission === "none") return "user = None";
  // The handshake is a request of its own: the session cookie signs it in like any view.
  if (ctx.server.auth === "cookie") return "user = signed_in() if credential else None";
  if (ctx.server.auth === "apikey") {
    return `user = db.get("SELECT * FROM users WHERE api_key = ${ph(1)}", (credential,)) if credential else None`;
  }
  if (admission === "unverified-claims") {
    return `decoded = decode_jwt(credential)
user = db.get("SELECT * FROM users WHERE id = ${ph(1)}", (decoded["claims"].get("sub"),)) if decoded else None`;
  }
  return `claims = verify_jwt(credential)
user = db.get("SELECT * FROM users WHERE id = ${ph(1)}", (claims["sub"],)) if claims else None`;
}

function refuses(admission: Admission): string {
  if (admission === "none") return "False";
  if (admission === "any-credential") return "not credential";
  return "user is None";
}

function indent(text: string, by = 4): string {
  const pad = " ".repeat(by);
  return text
    .split("\n")
    .map((line) => (line ? pad + line : line))
    .join("\n");
}

export function flaskChannelCode(place: ChannelPlace, spec: FlaskChannelSpec, ctx: BuildContext): string {
  const id = place.id;
  const ns = JSON.stringify(place.channel);
  const event = JSON.stringify(place.event);
  const apiKey = ctx.server.auth === "apikey";
  const field = apiKey ? "api_key" : "token";
  const read =
    place.placement === "cookie"
      ? `request.cookies.get("session", "")`
      : place.placement === "header"
        ? apiKey
          ? `request.headers.get("X-API-Key", "")`
          : "bearer_token()"
        : place.placement === "query"
          ? `request.args.get(${JSON.stringify(field)}, "")`
          : `str((auth or {}).get(${JSON.stringify(field)}, "") if isinstance(auth, dict) else "")`;
  const admit =
    spec.delivery === "everyone"
      ? "lambda user: True"
      : 'lambda user: user is not None and user["org_id"] == record["org_id"]';
  const deliver =
    spec.deliver ??
    `def deliver_${id}(message, admit):
    for sid, user in list(SUBSCRIBERS_${id}.items()):
        if admit(user):
            socketio.emit(${event}, message, to=sid, namespace=${ns})`;
  const onSubscribe = spec.onSubscribe
    ? `\nsince = request.args.get("since") or ((auth or {}).get("since") if isinstance(auth, dict) else None)\n${spec.onSubscribe}`
    : "";
  // Every channel numbers its events the same way when its family stamps them (seq under a lock).
  return `SUBSCRIBERS_${id} = {}
SEQUENCE_${id} = [0]
SEQUENCE_LOCK_${id} = threading.Lock()


@socketio.on("connect", namespace=${ns})
def connect_${id}(auth=None):
    credential = ${read}
${indent(identify(spec.admission, ctx))}
    if ${refuses(spec.admission)}:
        return False
    SUBSCRIBERS_${id}[request.sid] = user

    def reply(message):
        emit(${event}, message)
${indent(onSubscribe)}


@socketio.on("disconnect", namespace=${ns})
def disconnect_${id}():
    SUBSCRIBERS_${id}.pop(request.sid, None)


${deliver}


def publish_${id}(kind, record):
    message = {"type": kind, "record": record}
${spec.stamp ? indent(spec.stamp) : ""}
    deliver_${id}(message, ${admit})`;
}

const COLUMNS = "id, title, body AS note, owner_id, org_id";

/** The Flask views of the collection: create, read and update, as `recordOperations` documents them. */
export function flaskRecordViews(
  place: ChannelPlace,
  ctx: BuildContext,
  publicRead: boolean,
  eventRecord = "record",
): { create: string; read: string; update: string } {
  const { ph } = ctx;
  const kind = JSON.stringify(ctx.place.kind);
  const validate = `data = request.get_json(silent=True) or {}
title = data.get("title")
text = data.get("note", "")
if not isinstance(title, str) or not 0 < len(title) <= 80 or not isinstance(text, str) or len(text) > 400:
    return jsonify(error="title must be 1 to 80 characters, note at most 400"), 400`;
  const find = `if not re.fullmatch(r"[0-9]{1,9}", id):
    return jsonify(error="not found"), 404
record = db.get("SELECT ${COLUMNS} FROM records WHERE id = ${ph(1)} AND kind = ${ph(2)}", (int(id), ${kind}))`;
  const scoped = `if record is None or record["org_id"] != user["org_id"]:
    return jsonify(error="not found"), 404`;
  return {
    create: pyRoute(
      "POST",
      place.collection,
      `user = require_user()
${validate}
record = db.get("INSERT INTO records (uid, kind, owner_id, org_id, title, body, created_at) VALUES (${[1, 2, 3, 4, 5, 6, 7].map(ph).join(", ")}) RETURNING ${COLUMNS}", (str(uuid.uuid4()), ${kind}, user["id"], user["org_id"], title, text, datetime.utcnow().isoformat()))
publish_${place.id}("created", ${eventRecord})
return jsonify(record), 201`,
    ),
    read: pyRoute(
      "GET",
      place.item,
      publicRead
        ? `${find}
if record is None:
    return jsonify(error="not found"), 404
return jsonify(record)`
        : `user = require_user()
${find}
${scoped}
return jsonify(record)`,
    ),
    update: pyRoute(
      "PATCH",
      place.item,
      `user = require_user()
${find}
${scoped}
${validate}
changed = db.get("UPDATE records SET title = ${ph(1)}, body = ${ph(2)} WHERE id = ${ph(3)} RETURNING ${COLUMNS}", (title, text, record["id"]))
publish_${place.id}("updated", changed)
return jsonify(changed)`,
    ),
  };
}
