import { io as socketIo } from "socket.io-client";
import WebSocket from "ws";
import type { ChannelPlace } from "../generator/families/realtime-channel.ts";
import { SOCKET_IO_PATH } from "../generator/families/realtime-channel.ts";
import { claimsOf, signHs256 } from "./jwt.ts";
import type { Answer, OracleClient, Person } from "./oracle.ts";
import { brief } from "./oracle.ts";

// The realtime oracles' client: one connection to a variant's channel (plain WebSocket or a socket.io
// namespace) with a credential placed where that channel reads it, recording every JSON message. Written
// from the protocols (RFC 6455, socket.io's handshake), not from qaas's probes.

export interface Listener {
  opened: boolean;
  closed: boolean;
  messages: Array<Record<string, unknown>>;
  /** Resolves with the first message (after `from`) `match` accepts, or undefined after `ms`. */
  waitFor(
    match: (message: Record<string, unknown>) => boolean,
    ms?: number,
    from?: number,
  ): Promise<Record<string, unknown> | undefined>;
  /** Stops reading (the TCP socket is paused) or reads again. Plain WebSocket only. */
  pause(paused: boolean): void;
  close(): void;
}

/** A person's credential as the server issues it (a JWT, an API key, or a session cookie's value). */
export async function credentialOf(client: OracleClient, person: Person): Promise<string> {
  if (client.server.auth === "apikey") return client.secrets[`CORPUS_${person.toUpperCase()}_API_KEY`]!;
  if (client.server.auth === "cookie") return client.sessionCookie(person);
  return client.token(person);
}

/** Credentials that must not work: nothing, a random string, a real token expired and re-signed with a wrong key. */
export async function badCredentials(
  client: OracleClient,
): Promise<Array<{ label: string; credential?: string }>> {
  const real = await credentialOf(client, "alice");
  const now = Math.floor(Date.now() / 1000);
  const expired =
    client.server.auth !== "bearer"
      ? "k".repeat(real.length)
      : signHs256({ ...claimsOf(real), iat: now - 7200, exp: now - 3600 }, "not-the-server-key");
  return [
    { label: "no credential" },
    { label: "garbage credential", credential: "not-a-credential-at-all" },
    { label: "expired credential", credential: expired },
  ];
}

export async function listen(
  client: OracleClient,
  place: ChannelPlace,
  credential: string | undefined,
  extraQuery: Record<string, string> = {},
): Promise<Listener> {
  const messages: Array<Record<string, unknown>> = [];
  const arrivals: number[] = [];
  const waiters = new Set<() => void>();
  const record = (text: string) => {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        messages.push(parsed as Record<string, unknown>);
        arrivals.push(messages.length);
        for (const wake of waiters) wake();
      }
    } catch {
      // not JSON: nothing an oracle reads
    }
  };
  const apiKey = client.server.auth === "apikey";
  const names = apiKey ? { query: "api_key", field: "api_key" } : { query: "token", field: "token" };
  const headers: Record<string, string> = {};
  if (credential !== undefined && place.placement === "header") {
    if (apiKey) headers["x-api-key"] = credential;
    else headers.authorization = `Bearer ${credential}`;
  }
  if (credential !== undefined && place.placement === "cookie") headers.cookie = `session=${credential}`;
  const query: Record<string, string> = { ...extraQuery };
  if (credential !== undefined && place.placement === "query") query[names.query] = credential;
  const listener: Listener = {
    opened: false,
    closed: false,
    messages,
    async waitFor(match, ms = 1500, from = 0) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = messages.slice(from).find(match);
        if (found || Date.now() >= deadline) return found;
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
          setTimeout(wake, Math.max(10, deadline - Date.now()));
        });
      }
    },
    pause: () => undefined,
    close: () => undefined,
  };
  if (place.protocol === "websocket") {
    const url = new URL(place.channel, client.baseUrl.replace(/^http/, "ws"));
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    const ws = new WebSocket(url, { headers });
    ws.on("message", (data) => record(String(data)));
    ws.on("close", () => {
      listener.closed = true;
    });
    ws.on("error", () => undefined);
    listener.opened = await new Promise<boolean>((resolve) => {
      ws.once("open", () => resolve(true));
      ws.once("error", () => resolve(false));
      ws.once("unexpected-response", (_request, response) => {
        response.resume();
        resolve(false);
      });
      setTimeout(() => resolve(false), 3000);
    });
    if (listener.opened && credential !== undefined && place.placement === "message") {
      ws.send(JSON.stringify({ [names.field]: credential }));
    }
    listener.close = () => ws.terminate();
    listener.pause = (paused) => {
      const raw = (ws as unknown as { _socket?: { pause(): void; resume(): void } })._socket;
      if (paused) raw?.pause();
      else raw?.resume();
    };
  } else {
    const socket = socketIo(`${client.baseUrl}${place.channel}`, {
      path: SOCKET_IO_PATH,
      // Long-polling first, then the upgrade: the Flask servers' Engine.IO speaks polling only.
      transports: ["polling", "websocket"],
      reconnection: false,
      forceNew: true,
      query,
      extraHeaders: headers,
      auth: credential !== undefined && place.placement === "message" ? { [names.field]: credential } : {},
    });
    socket.onAny((_event, payload) => record(JSON.stringify(payload)));
    socket.on("disconnect", () => {
      listener.closed = true;
    });
    listener.opened = await new Promise<boolean>((resolve) => {
      socket.once("connect", () => resolve(true));
      socket.once("connect_error", () => resolve(false));
      setTimeout(() => resolve(false), 3000);
    });
    listener.close = () => socket.disconnect();
  }
  // A message-placed credential is read after the upgrade: give the server a moment to admit it.
  await new Promise((resolve) => setTimeout(resolve, 150));
  return listener;
}

/** Files a record as alice through the variant's collection: the answer and the new record's id. */
export async function fileRecord(
  client: OracleClient,
  place: ChannelPlace,
  json: Record<string, unknown>,
): Promise<{ created: Answer; id: unknown }> {
  const created = await client.ask({ as: "alice", method: "POST", path: place.collection, json });
  if (created.status !== 201) throw new Error(`create: ${brief(created)}`);
  return { created, id: (created.json as { id: unknown }).id };
}

/** Whether a message is about the record with this id. */
export function about(id: unknown): (message: Record<string, unknown>) => boolean {
  return (message) => (message.record as { id?: unknown } | undefined)?.id === id;
}
