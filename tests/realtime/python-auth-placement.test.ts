import { describe, expect, it } from "vitest";
import { scanChannels } from "../../src/probes/realtime/find-channels.ts";
import { writeTree } from "../map/write-tree.ts";

// A Flask-SocketIO connect handler's `auth` argument is None when the client sent no payload, so handlers
// usually read it as `(auth or {}).get("token")`. That reads the handshake's auth payload as surely as
// `auth.get("token")` does, and the probes must put the credential there.

describe("where a Flask-SocketIO connect handler reads the credential", () => {
  it("reads `(auth or {}).get(name)` as the handshake auth payload", () => {
    const root = writeTree({
      "app.py": `
from flask import Flask, request
from flask_socketio import SocketIO

app = Flask(__name__)
socketio = SocketIO(app)


@socketio.on("connect", namespace="/boards")
def boards_connected(auth=None):
    key = (auth or {}).get("api_key", "")
    if not key:
        return False


@socketio.on("connect", namespace="/feed")
def feed_connected(auth=None):
    if request.args.get("ticket") is None:
        return False
`,
    });
    const [channel] = scanChannels(root).channels;
    expect(channel?.channel.namespaces).toEqual(expect.arrayContaining(["/boards", "/feed"]));
    expect(channel?.credentials).toEqual(expect.arrayContaining(["auth:api_key", "query:ticket"]));
  });
});
