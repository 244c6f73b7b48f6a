// Realtime support for the corpus's Fastify servers: plain WebSocket channels (the `ws` package on Fastify's
// own HTTP server, dispatched by path in an `upgrade` listener, the way the ws README shares one server
// between several endpoints) and one socket.io server with a namespace per channel. Each channel is a hub of
// subscribers; the generated handlers decide who is admitted and who receives what (that is the variant).
// The app itself imports `ws` and `socket.io` (as an application would); this file only holds helpers.

/** The request path of an upgrade request, without its query. */
export function pathnameOf(request) {
  return new URL(request.url ?? "/", "http://127.0.0.1").pathname.replace(/\/+$/, "") || "/";
}

/** The query parameters of an upgrade request. */
export function queryOf(request) {
  return new URL(request.url ?? "/", "http://127.0.0.1").searchParams;
}

/** Refuses an upgrade with an HTTP status before any WebSocket frame (what a checked channel does). */
export function refuseUpgrade(socket, status, message) {
  const text = JSON.stringify({ error: message });
  socket.write(
    `HTTP/1.1 ${status} ${status === 401 ? "Unauthorized" : "Forbidden"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
  socket.destroy();
}

/** The claims of a JWT read WITHOUT checking its signature or expiry (the flaw some channels have). */
export function unverifiedClaims(token) {
  const parts = String(token ?? "").split(".");
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    return claims && typeof claims === "object" ? claims : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The subscribers of one channel. `send` is the subscriber's way to deliver a JSON message; `user` who it
 * is (undefined for an anonymous one). Publishing hands every subscriber to `admit`, which says whether it
 * receives the event (the variant's delivery rule).
 */
export function createHub() {
  const subscribers = new Set();
  return {
    add(subscriber) {
      subscribers.add(subscriber);
      return () => subscribers.delete(subscriber);
    },
    publish(message, admit = () => true) {
      for (const subscriber of subscribers) if (admit(subscriber)) subscriber.send(message);
    },
    get size() {
      return subscribers.size;
    },
  };
}

/** A plain WebSocket subscriber: JSON text frames. */
export function wsSubscriber(ws, user) {
  return {
    user,
    ws,
    send(message) {
      if (ws.readyState === 1) ws.send(JSON.stringify(message));
    },
  };
}

/** Waits for the first text frame of a fresh connection (a credential sent as a message), or times out. */
export function firstMessage(ws, timeoutMs = 3000) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    ws.once("message", (data) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(String(data)));
      } catch {
        resolve(undefined);
      }
    });
  });
}

/**
 * A document's rendered snapshot as some feeds attach to every change: about 300 KB, so that a burst of a
 * few dozen changes is far more than socket buffers hold.
 */
export function snapshotOf(record) {
  const line = `${record.id}\t${record.title}\t${record.note}\n`;
  return line.repeat(Math.ceil(300_000 / line.length)).slice(0, 300_000);
}
