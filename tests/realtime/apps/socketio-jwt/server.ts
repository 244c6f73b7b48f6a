import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Namespace, Socket } from "socket.io";
import { Server } from "socket.io";

// A small multi-tenant notes service that signs its users in with HS256 JWTs (one hour), with a socket.io
// server at /live whose namespaces read the token from the handshake auth, each checking it its own way:
//   /             signature (HS256, the server's secret) and expiry            correct
//   /expiry-only  the claims and their expiry, never the signature             (ws-unauthenticated)
//   /any-alg      the signature, unless the token says `alg: none`             (ws-unauthenticated)
//   /batched      verified; changes batched for 120 ms, flushed newest first   (ws-ordering, no numbers)
//   /queued       verified; changes batched for 120 ms, flushed oldest first   correct
// Every namespace sends a note only to sockets of the note's tenant (as the token it accepted says).

const SECRET = "jwt-fixture-secret-not-for-anything-else";
export const JWT_PASSWORDS = { alice: "alice-pass-1", bob: "bob-pass-2" };

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

export interface JwtSocketIoApp {
  baseUrl: string;
  close(): Promise<void>;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const sign = (text: string) => crypto.createHmac("sha256", SECRET).update(text).digest("base64url");

function issue(user: User): string {
  const now = Math.floor(Date.now() / 1000);
  const head = `${b64({ alg: "HS256", typ: "JWT" })}.${b64({ sub: user.id, iat: now, exp: now + 3600 })}`;
  return `${head}.${sign(head)}`;
}

interface Decoded {
  header: { alg?: unknown };
  claims: { sub?: unknown; exp?: unknown };
  signed: string;
  signature: string;
}

function decode(token: unknown): Decoded | undefined {
  const parts = String(token ?? "").split(".");
  if (parts.length !== 3) return undefined;
  try {
    return {
      header: JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8")),
      claims: JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")),
      signed: `${parts[0]}.${parts[1]}`,
      signature: parts[2]!,
    };
  } catch {
    return undefined;
  }
}

const signatureOk = (decoded: Decoded) =>
  decoded.header.alg === "HS256" && decoded.signature === sign(decoded.signed);
const fresh = (decoded: Decoded) =>
  typeof decoded.claims.exp === "number" && decoded.claims.exp > Date.now() / 1000;

type Check = (decoded: Decoded) => boolean;
const STRICT: Check = (decoded) => signatureOk(decoded) && fresh(decoded);

/** `onUpdate`: told of each note update as it is applied (a test's stand-in for another client's traffic). */
export async function startJwtSocketIoApp(options: { onUpdate?: () => void } = {}): Promise<JwtSocketIoApp> {
  const users: User[] = [
    { id: 1, name: "Alice Anders", email: "alice@tenant-a.test", tenant: "a", password: JWT_PASSWORDS.alice },
    { id: 2, name: "Bob Brennan", email: "bob@tenant-b.test", tenant: "b", password: JWT_PASSWORDS.bob },
  ];
  const notes = new Map<number, Note>();
  let nextId = 1;
  const userOf = (token: unknown, check: Check): User | undefined => {
    const decoded = decode(token);
    if (!decoded || !check(decoded)) return undefined;
    return users.find((user) => user.id === decoded.claims.sub);
  };

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
    const user = userOf(request.headers.authorization?.replace(/^Bearer /, ""), STRICT);
    const noteId = /^\/api\/notes\/(\d+)$/.exec(url.pathname)?.[1];
    if (url.pathname === "/health") return reply(200, { ok: true });
    if (url.pathname === "/api/login" && request.method === "POST") {
      const found = users.find(
        (candidate) => candidate.email === body.username && candidate.password === body.password,
      );
      if (!found) return reply(401, { error: "bad credentials" });
      return reply(200, {
        token: issue(found),
        user: { id: found.id, name: found.name, email: found.email },
      });
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
    if (noteId) {
      const note = notes.get(Number(noteId));
      if (!note || note.tenant !== user.tenant) return reply(404, { error: "not found" });
      if (request.method === "GET") return reply(200, note);
      if (request.method === "PATCH") {
        if (typeof body.title === "string") note.title = body.title;
        if (typeof body.body === "string") note.body = body.body;
        publish("note:updated", note);
        options.onUpdate?.();
        return reply(200, note);
      }
    }
    return reply(404, { error: "not found" });
  });

  const io = new Server(server, { path: "/live", serveClient: false });
  const guard =
    (check: Check) =>
    (socket: Socket, next: (error?: Error) => void): void => {
      const user = userOf(socket.handshake.auth.token, check);
      if (!user) {
        next(new Error("unauthorized"));
        return;
      }
      socket.join(`tenant:${user.tenant}`);
      next();
    };
  io.use(guard(STRICT));
  const expiryOnly = io.of("/expiry-only");
  expiryOnly.use(guard(fresh));
  const anyAlg = io.of("/any-alg");
  anyAlg.use(guard((decoded) => (decoded.header.alg === "none" ? fresh(decoded) : STRICT(decoded))));
  const batched = io.of("/batched");
  batched.use(guard(STRICT));
  const queued = io.of("/queued");
  queued.use(guard(STRICT));

  const batcher = (namespace: Namespace, newestFirst: boolean) => {
    const pending: Array<{ event: string; note: Note }> = [];
    return (event: string, note: Note): void => {
      pending.push({ event, note: { ...note } });
      if (pending.length > 1) return;
      setTimeout(() => {
        while (pending.length > 0) {
          const next = (newestFirst ? pending.pop() : pending.shift())!;
          namespace.to(`tenant:${next.note.tenant}`).emit(next.event, next.note);
        }
      }, 120);
    };
  };
  const toBatched = batcher(batched, true);
  const toQueued = batcher(queued, false);

  function publish(event: string, note: Note): void {
    const room = `tenant:${note.tenant}`;
    for (const namespace of [io.of("/"), expiryOnly, anyAlg]) namespace.to(room).emit(event, note);
    toBatched(event, note);
    toQueued(event, note);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    close: async () => {
      io.disconnectSockets(true);
      server.closeAllConnections();
      await io.close();
    },
  };
}
