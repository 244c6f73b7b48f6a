import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FlaskSocketIoApp } from "./apps/flask-socketio/start.ts";
import { FLASK_APP_ROOT, startFlaskSocketIoApp } from "./apps/flask-socketio/start.ts";
import type { SocketIoApp } from "./apps/socketio-node/server.ts";
import { startSocketIoApp } from "./apps/socketio-node/server.ts";
import { probe, summary } from "./probe-harness.ts";
import { socketIoContext } from "./socketio-harness.ts";

// The same probes over socket.io, on a Node server and on a Flask-SocketIO server run by Debian's Python.
// Neither profile lists a channel and the map has none: the probes find the servers, their paths and
// namespaces in each app's source, and connect with the token in the handshake's auth payload.

const NODE_APP_ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "apps", "socketio-node");

const stacks = [
  {
    stack: "Node socket.io",
    root: NODE_APP_ROOT,
    path: "/live",
    start: startSocketIoApp as () => Promise<SocketIoApp | FlaskSocketIoApp>,
  },
  {
    stack: "Flask-SocketIO",
    root: FLASK_APP_ROOT,
    path: "/socket.io",
    start: startFlaskSocketIoApp as () => Promise<SocketIoApp | FlaskSocketIoApp>,
  },
];

describe.each(stacks)("over $stack", ({ root, path: enginePath, start }) => {
  let app: SocketIoApp | FlaskSocketIoApp;
  beforeAll(async () => {
    app = await start();
  }, 30_000);
  afterAll(async () => {
    await app?.close();
  });

  it("reports the namespace that streams a tenant's notes to sockets without a token, and nothing on the guarded ones", async () => {
    const answer = await probe(app, "ws_probe_auth", {}, socketIoContext(app.baseUrl, root));
    expect(summary(answer)).toEqual({ filed: [`ws-unauthenticated ${enginePath} /open`], held: [] });
    const [draft] = answer.candidates;
    expect(draft).toMatchObject({ severity: "critical", confidence: 0.9 });
    expect(draft!.title).toBe(
      `socket.io namespace /open (${enginePath}) accepts connections without a valid token and sends them private events`,
    );
    const main = answer.stats.channels.find((channel) => channel.channel === enginePath);
    expect(main).toMatchObject({
      accepted_without_valid_token: [],
      refused: ["no token: unauthorized", "invalid token: unauthorized", "expired token: unauthorized"],
      owner_accepted: true,
      event_caused: "create /api/notes",
    });
  }, 60_000);

  it("reports the namespaces that send one tenant's notes to another tenant the API refuses, not the tenant-scoped one", async () => {
    const answer = await probe(app, "ws_probe_authorization", {}, socketIoContext(app.baseUrl, root));
    expect(summary(answer).filed.sort()).toEqual([
      `ws-authorization ${enginePath} /leaky`,
      `ws-authorization ${enginePath} /open`,
    ]);
    expect(answer.candidates[0]!.summary).toMatch(/GET \/api\/notes\/\{id\} answers 404 to bob/);
    const main = answer.stats.channels.find((channel) => channel.channel === enginePath);
    expect(main).toMatchObject({ events_caused: ["create /api/notes"], received_by: [] });
  }, 60_000);
});

describe("over Node socket.io, streams", () => {
  let app: SocketIoApp;
  beforeAll(async () => {
    app = await startSocketIoApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it("reports numbered events that arrive out of order on one namespace", async () => {
    const context = socketIoContext(app.baseUrl, NODE_APP_ROOT);
    const answer = await probe(app, "ws_probe_ordering", { namespace: "/shuffled", events: 8 }, context);
    expect(summary(answer)).toEqual({ filed: ["ws-ordering /live /shuffled"], held: [] });
    expect(answer.stats.channels[0]).toMatchObject({ sequence_field: "seq" });
  }, 30_000);

  it("finds nothing out of order where events carry no number and arrive as sent", async () => {
    const context = socketIoContext(app.baseUrl, NODE_APP_ROOT);
    const answer = await probe(
      app,
      "ws_probe_ordering",
      { channel: "/live", namespace: "/", events: 5 },
      context,
    );
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.channels[0]).toMatchObject({ sequence_field: null });
  }, 30_000);

  it("reports a namespace that promises resuming but replays nothing, after a dropped connection", async () => {
    const context = socketIoContext(app.baseUrl, NODE_APP_ROOT);
    const answer = await probe(app, "ws_probe_reconnect", { channel: "/forgetful" }, context);
    expect(summary(answer)).toEqual({ filed: ["ws-reconnect /live /forgetful"], held: [] });
    expect(answer.stats.channels[0]).toMatchObject({ resume_param: "since", missed: 3, replayed: 0 });
  }, 30_000);

  it("holds the server to its connection state recovery: nothing where rooms replay what a dropped client missed", async () => {
    const context = socketIoContext(app.baseUrl, NODE_APP_ROOT);
    const answer = await probe(app, "ws_probe_reconnect", { channel: "/live", namespace: "/" }, context);
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.channels[0]).toMatchObject({
      resume_param: "socket.io connection state recovery",
      missed: 3,
      replayed: 3,
      duplicated_seen_event: false,
    });
  }, 30_000);

  it("reports recovery that replays nothing because events went to sockets tracked as online", async () => {
    const context = socketIoContext(app.baseUrl, NODE_APP_ROOT);
    const answer = await probe(app, "ws_probe_reconnect", { channel: "/direct" }, context);
    expect(summary(answer)).toEqual({ filed: ["ws-reconnect /live /direct"], held: [] });
    expect(answer.candidates[0]!.summary).toMatch(/promises socket.io connection state recovery/);
    expect(answer.stats.channels[0]).toMatchObject({ missed: 3, replayed: 0 });
  }, 30_000);

  it("leaves no connection open on the server after the probes", async () => {
    const context = socketIoContext(app.baseUrl, NODE_APP_ROOT);
    await probe(app, "ws_probe_backpressure", { namespace: "/", events: 5 }, context);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(app.openSockets()).toBe(0);
  }, 30_000);
});
