import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import { resolveSession, tokenFromHeaders } from "../services/auth.ts";
import type { ServiceContext, SessionUser } from "../services/context.ts";
import { sessionSecondsLeft } from "../services/workspace.ts";
import { HISTORY_SIZE, type Hub } from "./hub.ts";
import type { Presence } from "./presence.ts";

const HEARTBEAT_MS = 30_000;

function reject(socket: Duplex, status: number, reason: string): void {
  const body = JSON.stringify({ error: reason });
  socket.write(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
  socket.destroy();
}

function sameOrigin(request: IncomingMessage): boolean {
  const origin = request.headers.origin;
  if (!origin) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

function sessionFor(ctx: ServiceContext, request: IncomingMessage, url: URL): SessionUser | null {
  const token = url.searchParams.get("token") ?? tokenFromHeaders(request.headers);
  return resolveSession(ctx, token);
}

/** Serves `/ws` (workspace updates) and `/ws/presence` (who is online) on the HTTP server. */
export function attachRealtime(
  server: Server,
  ctx: ServiceContext,
  hub: Hub,
  presence: Presence,
): () => void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 });
  const alive = new WeakMap<WebSocket, boolean>();

  function track(socket: WebSocket): WebSocket {
    alive.set(socket, true);
    socket.on("pong", () => alive.set(socket, true));
    return socket;
  }

  function onUpdates(socket: WebSocket, user: SessionUser, url: URL): void {
    const client = hub.add(socket, user.id, user.tenantId);
    presence.join(user);
    socket.send(
      JSON.stringify({
        type: "hello",
        seq: hub.lastSeq(user.tenantId),
        user: { id: user.id, name: user.name },
        resume: { param: "since", buffer: HISTORY_SIZE },
      }),
    );
    const resumeFrom = url.searchParams.get("last_event_id");
    if (resumeFrom && /^\d+$/.test(resumeFrom)) hub.replay(client, Number(resumeFrom));

    const expiry = setTimeout(() => socket.close(4401, "session expired"), sessionSecondsLeft(user) * 1000);
    socket.on("message", (raw) => {
      let message: { type?: unknown };
      try {
        message = JSON.parse(String(raw));
      } catch {
        socket.send(JSON.stringify({ type: "error", message: "messages must be JSON" }));
        return;
      }
      if (message.type === "ping") socket.send(JSON.stringify({ type: "pong" }));
      else socket.send(JSON.stringify({ type: "error", message: "unknown message type" }));
    });
    socket.on("close", () => {
      clearTimeout(expiry);
      hub.remove(client);
      presence.leave(user);
    });
  }

  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== "/ws" && url.pathname !== "/ws/presence") return reject(socket, 404, "Not Found");
    if (!sameOrigin(request)) return reject(socket, 403, "Forbidden");
    const user = sessionFor(ctx, request, url);
    if (url.pathname === "/ws") {
      if (!user) return reject(socket, 401, "Unauthorized");
      wss.handleUpgrade(request, socket, head, (ws) => onUpdates(track(ws), user, url));
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => presence.watch(track(ws), user?.tenantId ?? null));
  });

  const heartbeat = setInterval(() => {
    for (const socket of wss.clients) {
      if (alive.get(socket) === false) {
        socket.terminate();
        continue;
      }
      alive.set(socket, false);
      socket.ping();
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();

  return () => {
    clearInterval(heartbeat);
    for (const socket of wss.clients) socket.terminate();
    wss.close();
  };
}
