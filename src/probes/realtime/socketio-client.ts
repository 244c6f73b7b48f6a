import type { Socket } from "socket.io-client";
import { io } from "socket.io-client";
import type WebSocket from "ws";
import type { OpenOptions } from "./connection.ts";
import { ObservedConnection } from "./connection.ts";

// A socket.io connection (Engine.IO v4 / Socket.IO v5) through `socket.io-client`: each named event in and
// out is one message of the log. Every observer gets a manager of its own (`forceNew`), so two observers
// never share one connection, and none reconnects by itself: a refused handshake stays refused.
// Credentials go where the server reads them: the handshake `auth` payload, the query, or headers (a
// cookie, Authorization) on the upgrade request.

export interface SocketIoOpenOptions extends OpenOptions {
  /** The Engine.IO path on the server (`/socket.io` by default), the target's base path included. */
  path: string;
  namespace: string;
  auth?: Record<string, unknown>;
  query?: Record<string, string>;
}

/** The parts of the Engine.IO transport the client does not type: the `ws` socket under a websocket transport. */
interface TransportInternals {
  name?: string;
  ws?: WebSocket | null;
}

/** Fields socket.io-client keeps for connection state recovery (set only when the server enables it). */
interface RecoveryInternals {
  _pid?: string;
  _lastOffset?: string;
}

export class ObservedSocketIo extends ObservedConnection {
  private raw: WebSocket | undefined;

  private constructor(
    label: string,
    url: string,
    private readonly socket: Socket,
    clock: () => number,
    maxFrames: number,
  ) {
    super(label, url, "socket.io", clock, maxFrames);
  }

  /** `http(s)://host` of the target and the options; resolves once the namespace answered (or not). */
  static open(origin: string, options: SocketIoOpenOptions): Promise<ObservedSocketIo> {
    const socket = io(`${origin}${options.namespace === "/" ? "" : options.namespace}`, {
      path: options.path,
      forceNew: true,
      reconnection: false,
      timeout: options.timeoutMs,
      // Websocket first (headers ride on the upgrade, and a paused socket shows backpressure); long-polling
      // when the server offers only that.
      transports: ["websocket", "polling"],
      tryAllTransports: true,
      ...(options.auth ? { auth: options.auth } : {}),
      ...(options.query ? { query: options.query } : {}),
      ...(options.headers && Object.keys(options.headers).length > 0
        ? { extraHeaders: options.headers }
        : {}),
    });
    const query = new URLSearchParams({ EIO: "4", transport: "websocket", ...options.query });
    const url = `${origin.replace(/^http/, "ws")}${options.path.replace(/\/?$/, "/")}?${query}`;
    const observed = new ObservedSocketIo(
      options.label,
      url,
      socket,
      options.clock,
      options.maxFrames ?? 2000,
    );
    socket.io.on("open", () => observed.watchTransport());
    socket.io.engine?.on("upgrade", () => observed.watchTransport());
    socket.onAny((event: string, ...args: unknown[]) => observed.logEvent("in", event, args));
    socket.onAnyOutgoing((event: string, ...args: unknown[]) => observed.logEvent("out", event, args));
    socket.on("disconnect", (reason: string) => observed.closedByServer(undefined, reason));
    return new Promise((resolve) => {
      let settled = false;
      const settle = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(observed);
      };
      const timer = setTimeout(() => {
        observed.outcome.error ??= "timeout";
        socket.disconnect();
        settle();
      }, options.timeoutMs + 200);
      socket.on("connect", () => {
        observed.outcome.opened = true;
        observed.watchTransport();
        settle();
      });
      socket.on("connect_error", (error: Error & { description?: unknown; data?: unknown }) => {
        const described = describe(error.description);
        const status = /Unexpected server response: (\d{3})|status(?: code)? (\d{3})/i.exec(described);
        if (status) observed.outcome.rejectedStatus = Number(status[1] ?? status[2]);
        else observed.outcome.error ??= [error.message, described].filter(Boolean).join(": ").slice(0, 200);
        settle();
      });
    });
  }

  get isOpen(): boolean {
    return this.socket.connected;
  }

  /** The server's connection state recovery promise: a session id and the last offset seen. */
  get recovery(): { pid: string; offset: string | undefined } | undefined {
    const internals = this.socket as unknown as RecoveryInternals;
    return internals._pid ? { pid: internals._pid, offset: internals._lastOffset } : undefined;
  }

  send(value: unknown, event = "message"): void {
    if (this.isOpen) this.socket.emit(event, value);
  }

  pause(): void {
    this.raw?.pause();
  }

  resume(): void {
    this.raw?.resume();
  }

  close(): Promise<void> {
    this.closingByProbe = true;
    const raw = this.raw;
    this.raw?.resume();
    this.socket.disconnect();
    if (!raw || raw.readyState === raw.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        raw.terminate();
        resolve();
      }, 300);
      raw.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  drop(): Promise<void> {
    this.closingByProbe = true;
    if (this.raw) this.raw.terminate();
    else this.socket.io.engine?.close();
    return this.close();
  }

  /** Keeps hold of the `ws` socket under the websocket transport: bytes are counted and pausing reaches it. */
  private watchTransport(): void {
    const transport = this.socket.io.engine?.transport as unknown as TransportInternals | undefined;
    const raw = transport?.name === "websocket" ? (transport.ws ?? undefined) : undefined;
    if (!raw || raw === this.raw) return;
    this.raw = raw;
    raw.on("message", (data: WebSocket.RawData) => {
      this.bytesReceived += Array.isArray(data)
        ? data.reduce((sum, part) => sum + part.length, 0)
        : (data as Buffer).length;
    });
  }

  private logEvent(direction: "in" | "out", event: string, args: unknown[]): void {
    const values = args.filter((value) => typeof value !== "function");
    // With connection state recovery on, the server appends each event's offset: not part of the event.
    if (direction === "in" && this.recovery && typeof values.at(-1) === "string") values.pop();
    let text: string;
    try {
      text = JSON.stringify([event, ...values]);
    } catch {
      text = `["${event}", <unserialisable>]`;
    }
    // Without a websocket transport (long-polling) bytes are counted from the events themselves.
    if (direction === "in" && !this.raw) this.bytesReceived += Buffer.byteLength(text);
    this.logFrame(direction, text, Buffer.byteLength(text), {
      event,
      json: values.length === 1 ? values[0] : values,
    });
  }
}

function describe(description: unknown): string {
  if (!description) return "";
  if (description instanceof Error) return description.message;
  if (typeof description === "object") {
    const inner = (description as { message?: unknown; error?: unknown }).message;
    if (typeof inner === "string") return inner;
    const error = (description as { error?: unknown }).error;
    if (error instanceof Error) return error.message;
  }
  return String(description);
}
