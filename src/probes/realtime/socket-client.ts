import WebSocket from "ws";
import type { OpenOptions } from "./connection.ts";
import { ObservedConnection } from "./connection.ts";

// A plain WebSocket connection (the `ws` client): each frame in and out is one message of the log.

export class ObservedSocket extends ObservedConnection {
  private constructor(
    label: string,
    url: string,
    private readonly socket: WebSocket,
    clock: () => number,
    maxFrames: number,
  ) {
    super(label, url, "websocket", clock, maxFrames);
  }

  static open(url: string, options: OpenOptions): Promise<ObservedSocket> {
    const socket = new WebSocket(url, {
      headers: options.headers,
      handshakeTimeout: options.timeoutMs,
      perMessageDeflate: false,
      followRedirects: false,
    });
    const observed = new ObservedSocket(options.label, url, socket, options.clock, options.maxFrames ?? 2000);
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
        socket.terminate();
        settle();
      }, options.timeoutMs + 100);
      socket.on("open", () => {
        observed.outcome.opened = true;
        settle();
      });
      socket.on("message", (data: WebSocket.RawData, isBinary: boolean) => observed.receive(data, isBinary));
      socket.on("error", (error: Error) => {
        const status = /Unexpected server response: (\d{3})/.exec(error.message)?.[1];
        if (status) observed.outcome.rejectedStatus = Number(status);
        // The library's own handshake timer is a timeout like ours: a busy target, tried once more.
        else
          observed.outcome.error ??= /handshake has timed out/i.test(error.message)
            ? "timeout"
            : error.message;
        settle();
      });
      socket.on("close", (code: number, reason: Buffer) => {
        observed.closedByServer(code, reason.toString("utf8"));
        settle();
      });
    });
  }

  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  send(value: unknown): void {
    if (!this.isOpen) return;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    this.socket.send(text);
    this.logFrame("out", text, Buffer.byteLength(text));
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  close(): Promise<void> {
    this.closingByProbe = true;
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.socket.terminate();
        resolve();
      }, 300);
      this.socket.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
      try {
        if (this.socket.readyState === WebSocket.CONNECTING) this.socket.terminate();
        else {
          this.socket.resume();
          this.socket.close(1000, "qaas probe done");
        }
      } catch {
        this.socket.terminate();
      }
    });
  }

  drop(): Promise<void> {
    this.closingByProbe = true;
    this.socket.terminate();
    return this.close();
  }

  private receive(data: WebSocket.RawData, isBinary: boolean): void {
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    this.bytesReceived += buffer.length;
    const text = isBinary ? `<binary ${buffer.length} bytes>` : buffer.toString("utf8");
    this.logFrame("in", text, buffer.length);
  }
}
