import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findChannels, scanChannels } from "../../src/probes/realtime/find-channels.ts";
import { writeTree } from "../map/write-tree.ts";

const here = path.dirname(fileURLToPath(import.meta.url));

describe("socket.io channels in Node source", () => {
  it("finds the server's path, its namespaces, the events it listens for and emits, and where it reads the token", () => {
    const root = writeTree(
      {
        "package.json": JSON.stringify({ dependencies: { "socket.io": "4.8.4", express: "4.21.0" } }),
        "src/server.ts": `
import http from "node:http";
import { Server } from "socket.io";
import { registerOrders } from "./handlers/orders";
const PATH = "/rt";
const httpServer = http.createServer();
export const io = new Server(httpServer, { path: PATH, cors: { origin: "*" } });
io.use((socket, next) => (verify(socket.handshake.auth.token) ? next() : next(new Error("unauthorized"))));
io.on("connection", (socket) => {
  socket.join("lobby");
  socket.on("chat:send", (message) => io.to("lobby").emit("chat:message", message));
  socket.on("disconnect", () => undefined);
  registerOrders(io, socket);
});
const admin = io.of("/admin");
admin.on("connection", onAdmin);
function onAdmin(client) {
  client.on("ban", () => client.broadcast.emit("banned"));
}
// socket.on("commented-out", () => {}) is not an event
`,
        "src/handlers/orders.ts": `
export function registerOrders(io, socket) {
  socket.on("order:create", () => io.of("/admin").emit("order:created"));
}
`,
        "src/ws-feed.ts": `
import { WebSocketServer } from "ws";
const wss = new WebSocketServer({ noServer: true });
wss.on("connection", (socket) => socket.on("message", () => socket.send("x")));
`,
        "web/client.ts": `
import { io } from "socket.io-client";
const socket = io("/chat");
socket.on("client-only", () => undefined);
`,
      },
      "qaas-channels-",
    );
    const [found, ...others] = scanChannels(root).channels;
    expect(others).toEqual([]);
    expect(found!.channel).toEqual({
      path: "/rt",
      seen_in: ["source"],
      protocol: "socket.io",
      namespaces: ["/", "/admin"],
      events: ["ban", "banned", "chat:message", "chat:send", "order:create", "order:created"],
    });
    expect(found!.credentials).toEqual(["auth:token"]);
    expect(found).toMatchObject({ checksConnections: true, declaredIn: ["src/server.ts:7"] });
  });

  it("reads the CommonJS factory, the default path, a first-event login and a destructured auth payload", () => {
    const root = writeTree({
      "index.js": `
const server = require("http").createServer();
const io = require("socket.io")(server);
const tenants = io.of("/tenants");
tenants.on("connection", (socket) => {
  const { jwt } = socket.handshake.query;
  socket.on("authenticate", ({ token }) => check(token));
  tenants.to(socket.id).emit("ready");
});
`,
    });
    const [found] = scanChannels(root).channels;
    expect(found!.channel).toMatchObject({
      path: "/socket.io",
      namespaces: ["/tenants"],
      events: ["authenticate", "ready"],
    });
    expect(found!.credentials.sort()).toEqual(["event:authenticate:token", "query:jwt"]);
  });

  it("finds nothing in a project that only runs plain ws servers and a socket.io client", () => {
    const root = writeTree({
      "server.js": `const { WebSocketServer } = require("ws");\nconst wss = new WebSocketServer({ path: "/ws" });\nwss.on("connection", (socket) => socket.on("ping", () => socket.emit("pong")));\n`,
      "client.js": `import { io } from "socket.io-client";\nconst socket = io();\nsocket.on("news", () => socket.emit("ack"));\n`,
    });
    expect(findChannels(root)).toEqual([]);
  });
});

describe("channels in Python source", () => {
  it("finds a Flask-SocketIO server with its path, namespaces, events, rooms and credential reads", () => {
    const root = writeTree({
      "app/__init__.py": `
from flask import Flask, request
from flask_socketio import SocketIO, emit, join_room

app = Flask(__name__)
socketio = SocketIO(app, path="/io", cors_allowed_origins="*")
LOBBY = "/lobby"


@socketio.on("wave", namespace=LOBBY)
def wave(data):
    emit("waved", data, namespace=LOBBY)


@socketio.on("connect")
def connect(auth):
    if not valid(auth.get("token")) and not request.args.get("key"):
        return False


@socketio.on("join", namespace="/rooms")
def on_join(data):
    join_room(data["room"])
    emit("joined", {"room": data["room"]}, namespace="/rooms")


@socketio.on("authenticate", namespace="/rooms")
def authenticate(data):
    return check(data["jwt"])
`,
    });
    const [found, ...others] = scanChannels(root).channels;
    expect(others).toEqual([]);
    expect(found!.channel).toEqual({
      path: "/io",
      seen_in: ["source"],
      protocol: "socket.io",
      namespaces: ["/", "/lobby", "/rooms"],
      events: ["authenticate", "join", "joined", "wave", "waved"],
    });
    expect(found!.credentials.sort()).toEqual(["auth:token", "event:authenticate:jwt", "query:key"]);
    expect(found!.declaredIn).toEqual(["app/__init__.py:6"]);
  });

  it("finds python-socketio behind an ASGI app, its class namespaces, and plain websockets, Starlette and flask_sockets endpoints", () => {
    const root = writeTree({
      "realtime.py": `
import socketio

sio = socketio.AsyncServer(async_mode="asgi")
app = socketio.ASGIApp(sio, socketio_path="sock")


@sio.event
async def connect(sid, environ, auth):
    return environ.get("HTTP_COOKIE") is not None


class Chat(socketio.AsyncNamespace):
    async def on_message(self, sid, data):
        await self.emit("echo", data)


sio.register_namespace(Chat("/chat"))
`,
      "feeds.py": `
import websockets
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute


async def main():
    async with websockets.serve(handler, "127.0.0.1", 8765):
        pass

app = Starlette(routes=[WebSocketRoute("/ws/feed", Feed)])
`,
      "legacy.py": `
from flask import Flask
from flask_sockets import Sockets

app = Flask(__name__)
sockets = Sockets(app)


@sockets.route("/echo")
def echo(ws):
    ws.send(ws.receive())
`,
    });
    const channels = scanChannels(root).channels;
    expect(channels.map((found) => found.channel)).toEqual([
      {
        path: "/sock",
        seen_in: ["source"],
        protocol: "socket.io",
        namespaces: ["/", "/chat"],
        events: ["echo", "message"],
      },
      { path: "/", seen_in: ["source"], protocol: "websocket" },
      { path: "/ws/feed", seen_in: ["source"], protocol: "websocket" },
      { path: "/echo", seen_in: ["source"], protocol: "websocket" },
    ]);
    expect(channels[0]!.credentials).toEqual(["header:cookie"]);
  });
});

describe("the socket.io apps the probe tests run", () => {
  it("are found from their source: the Node server at /live and the Flask one at the default path", () => {
    expect(findChannels(path.join(here, "apps", "socketio-node"))).toEqual([
      {
        path: "/live",
        seen_in: ["source"],
        protocol: "socket.io",
        namespaces: ["/", "/leaky", "/open", "/shuffled", "/forgetful", "/direct"],
        events: ["hello", "welcome"],
      },
    ]);
    expect(findChannels(path.join(here, "apps", "flask-socketio"))).toEqual([
      {
        path: "/socket.io",
        seen_in: ["source"],
        protocol: "socket.io",
        namespaces: ["/", "/leaky", "/open"],
        events: [],
      },
    ]);
  });
});
