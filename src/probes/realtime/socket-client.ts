import WebSocket from "ws";

// One observed WebSocket connection: every frame in and out with its time, how the handshake ended (opened,
// refused with an HTTP status, failed) and how the connection closed. Opening never throws; every wait is
// bounded; `close()` always leaves the socket closed (terminated if the close handshake stalls).

export interface Frame {
  /** Milliseconds since the probe's clock started. */
  at: number;
  direction: "in" | "out";
  text: string;
  json: unknown;
  bytes: number;
}

export interface SocketOutcome {
  opened: boolean;
  /** The HTTP status when the server refused the upgrade. */
  rejectedStatus?: number;
  error?: string;
  closeCode?: number;
  closeReason?: string;
  /** When the server (not the probe) closed it. */
  closedByServerAt?: number;
}

export interface OpenOptions {
  label: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  /** The probe's clock: frame times are relative to it. */
  clock: () => number;
  /** Frames kept (in, out); bytes are counted beyond it. */
  maxFrames?: number;
}

const MAX_FRAME_TEXT = 64 * 1024;

function parse(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

export class ObservedSocket {
  readonly frames: Frame[] = [];
  readonly outcome: SocketOutcome = { opened: false };
  bytesReceived = 0;
  framesReceived = 0;
  private closingByProbe = false;
  private readonly listeners = new Set<() => void>();

  private constructor(
    readonly label: string,
    readonly url: string,
    private readonly socket: WebSocket,
    private readonly clock: () => number,
    private readonly maxFrames: number,
  ) {}

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
        else observed.outcome.error ??= error.message;
        settle();
      });
      socket.on("close", (code: number, reason: Buffer) => {
        observed.outcome.closeCode = code;
        observed.outcome.closeReason = reason.toString("utf8").slice(0, 200);
        if (!observed.closingByProbe) observed.outcome.closedByServerAt = observed.clock();
        observed.notify();
        settle();
      });
    });
  }

  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  get bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  send(value: unknown): void {
    if (!this.isOpen) return;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    this.socket.send(text);
    this.logFrame("out", text, Buffer.byteLength(text));
  }

  /** Stops reading from the network: the server's writes pile up in buffers (a slow consumer). */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Frames received from `since` (probe clock) on. */
  received(since = 0): Frame[] {
    return this.frames.filter((frame) => frame.direction === "in" && frame.at >= since);
  }

  /** The first received frame from `since` on that satisfies `predicate`, waiting at most `timeoutMs`. */
  waitFor(predicate: (frame: Frame) => boolean, timeoutMs: number, since = 0): Promise<Frame | undefined> {
    const found = (): Frame | undefined => this.received(since).find(predicate);
    const already = found();
    if (already || timeoutMs <= 0) return Promise.resolve(already);
    return new Promise((resolve) => {
      const check = (): void => {
        const frame = found();
        if (frame || !this.isOpen) finish(frame);
      };
      const finish = (frame: Frame | undefined): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(frame);
      };
      const timer = setTimeout(() => finish(found()), timeoutMs);
      this.listeners.add(check);
    });
  }

  /** Waits until no frame has arrived for `quietMs` (at most `maxMs`). */
  async settle(quietMs: number, maxMs: number): Promise<void> {
    const deadline = this.clock() + maxMs;
    let seen = this.framesReceived;
    while (this.clock() < deadline) {
      await delay(Math.min(quietMs, Math.max(0, deadline - this.clock())));
      if (this.framesReceived === seen) return;
      seen = this.framesReceived;
    }
  }

  /** Closes politely, then forcibly if the close handshake does not finish in time. */
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

  private receive(data: WebSocket.RawData, isBinary: boolean): void {
    const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    this.bytesReceived += buffer.length;
    this.framesReceived += 1;
    const text = isBinary ? `<binary ${buffer.length} bytes>` : buffer.toString("utf8");
    this.logFrame("in", text, buffer.length);
    this.notify();
  }

  private logFrame(direction: Frame["direction"], text: string, bytes: number): void {
    if (this.frames.length >= this.maxFrames) return;
    const kept =
      text.length > MAX_FRAME_TEXT ? `${text.slice(0, MAX_FRAME_TEXT)}…[${text.length} chars]` : text;
    this.frames.push({
      at: this.clock(),
      direction,
      text: kept,
      json: kept === text ? parse(text) : undefined,
      bytes,
    });
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
