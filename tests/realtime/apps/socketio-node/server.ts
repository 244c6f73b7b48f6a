import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Socket } from "socket.io";
import { Server } from "socket.io";

// A small multi-tenant notes service written for these tests, with a socket.io server at /live whose
// namespaces each behave one way: planted defects next to the correct main namespace. The server turns on
// connection state recovery, which replays what a dropped client missed if it went to a room.
//   /           token in the handshake auth, events to the user's tenant room only   correct
//   /leaky      token required, but every tenant's notes to every socket              (ws-authorization)
//   /open       no authentication, every tenant's notes to everyone                   (ws-unauthenticated)
//   /shuffled   tenant-scoped and numbered, every third event sent late               (ws-ordering)
//   /forgetful  promises resuming with `since`, replays nothing                       (ws-reconnect)
//   /direct     emits to the sockets it tracks as online, so recovery has nothing     (ws-reconnect)
//               to replay after a drop
// The HTTP API is the same as the Flask-SocketIO app's (tests/realtime/apps/flask-socketio/app.py).

export const PASSWORDS = { alice: "alice-pass-1", bob: "bob-pass-2" };

interface User {
  id: number;
  name: string;
  email: string;
  tenant: string;
  password: string;
}

interface Note {
  id: number;
  title: string;
  body: string;
  tenant: string;
}

export interface SocketIoApp {
  baseUrl: string;
  /** socket.io connections the server still holds. */
  openSockets(): number;
  close(): Promise<void>;
}

export async function startSocketIoApp(): Promise<SocketIoApp> {
  const users: User[] = [
    { id: 1, name: "Alice Anders", email: "alice@tenant-a.test", tenant: "a", password: PASSWORDS.alice },
    { id: 2, name: "Bob Brennan", email: "bob@tenant-b.test", tenant: "b", password: PASSWORDS.bob },
  ];
  const tokens = new Map<string, User>();
  const notes = new Map<number, Note>();
  const sequences = new Map<string, number>();
  let nextId = 1;

  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
    } catch {
      body = {};
    }
    const reply = (status: number, value: unknown): void => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    const user = tokens.get(request.headers.authorization?.replace(/^Bearer /, "") ?? "");
    const noteId = /^\/api\/notes\/(\d+)$/.exec(url.pathname)?.[1];
    if (url.pathname === "/health") return reply(200, { ok: true });
    if (url.pathname === "/api/login" && request.method === "POST") {
      const found = users.find(
        (candidate) => candidate.email === body.username && candidate.password === body.password,
      );
      if (!found) return reply(401, { error: "bad credentials" });
      const token = `tok-${found.id}-${Math.random().toString(36).slice(2)}`;
      tokens.set(token, found);
      return reply(200, { token, user: { id: found.id, name: found.name, email: found.email } });
    }
    if (!user) return reply(401, { error: "sign in" });
    if (url.pathname === "/api/notes" && request.method === "POST") {
      const note: Note = {
        id: nextId++,
        title: String(body.title ?? ""),
        body: String(body.body ?? ""),
        tenant: user.tenant,
      };
      notes.set(note.id, note);
      publish("note:created", note);
      return reply(201, note);
    }
    if (url.pathname === "/api/notes" && request.method === "GET") {
      return reply(200, { items: [...notes.values()].filter((note) => note.tenant === user.tenant) });
    }
    if (noteId) {
      const note = notes.get(Number(noteId));
      if (!note || note.tenant !== user.tenant) return reply(404, { error: "not found" });
      if (request.method === "GET") return reply(200, note);
      if (request.method === "PATCH") {
        if (typeof body.title === "string") note.title = body.title;
        if (typeof body.body === "string") note.body = body.body;
        publish("note:updated", note);
        return reply(200, note);
      }
    }
    return reply(404, { error: "not found" });
  });

  const io = new Server(server, {
    path: "/live",
    serveClient: false,
    connectionStateRecovery: { maxDisconnectionDuration: 60_000 },
  });
  const requireToken = (socket: Socket, next: (error?: Error) => void): void => {
    const user = tokens.get(String(socket.handshake.auth.token ?? ""));
    if (!user) {
      next(new Error("unauthorized"));
      return;
    }
    socket.data.user = user;
    next();
  };
  const joinTenant = (socket: Socket): void => {
    socket.join(`tenant:${(socket.data.user as User).tenant}`);
  };
  io.use(requireToken);
  io.on("connection", joinTenant);
  const leaky = io.of("/leaky");
  leaky.use(requireToken);
  const open = io.of("/open");
  open.on("connection", (socket) => socket.emit("welcome", { at: Date.now() }));
  const shuffled = io.of("/shuffled");
  shuffled.use(requireToken);
  shuffled.on("connection", joinTenant);
  const forgetful = io.of("/forgetful");
  forgetful.use(requireToken);
  forgetful.on("connection", (socket) => {
    joinTenant(socket);
    socket.emit("hello", { resume: { param: "since" } });
  });

  const direct = io.of("/direct");
  const online = new Map<string, Set<Socket>>();
  direct.use(requireToken);
  direct.on("connection", (socket) => {
    const tenant = (socket.data.user as User).tenant;
    online.set(tenant, (online.get(tenant) ?? new Set()).add(socket));
    socket.on("disconnect", () => online.get(tenant)?.delete(socket));
  });

  const nextSeq = (key: string): number => {
    const value = (sequences.get(key) ?? 0) + 1;
    sequences.set(key, value);
    return value;
  };
  function publish(event: string, note: Note): void {
    const room = `tenant:${note.tenant}`;
    io.to(room).emit(event, note);
    leaky.emit(event, note);
    open.emit(event, note);
    const seq = nextSeq(`shuffled:${note.tenant}`);
    setTimeout(() => shuffled.to(room).emit(event, { seq, ...note }), seq % 3 === 0 ? 40 : 0);
    forgetful.to(room).emit(event, { seq: nextSeq(`forgetful:${note.tenant}`), ...note });
    for (const socket of online.get(note.tenant) ?? []) socket.emit(event, note);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    openSockets: () => io.engine.clientsCount,
    close: async () => {
      io.disconnectSockets(true);
      server.closeAllConnections();
      await io.close();
    },
  };
}
