// What every realtime probe talks to: one observed connection to a channel, plain WebSocket or socket.io,
// behind one interface. Each keeps every message in and out with its time (a socket.io event is one
// message, with its name), how the handshake ended (opened, refused with an HTTP status or an error) and how
// the connection closed. Opening never throws; every wait is bounded; `close()` always leaves it closed.

export type ChannelProtocol = "websocket" | "socket.io";

export interface Frame {
  /** Milliseconds since the probe's clock started. */
  at: number;
  direction: "in" | "out";
  /** socket.io: the event's name. Plain WebSocket frames have none. */
  event?: string;
  /** The frame as sent (socket.io: `["event", ...args]` as JSON). */
  text: string;
  /** The parsed payload: the frame's JSON, or a socket.io event's one argument (its arguments when several). */
  json: unknown;
  bytes: number;
}

export interface SocketOutcome {
  opened: boolean;
  /** The HTTP status when the server refused the upgrade. */
  rejectedStatus?: number;
  /** Why the connection did not open (a socket.io `connect_error` message, a network error, `timeout`). */
  error?: string;
  closeCode?: number;
  closeReason?: string;
  /** When the server (not the probe) closed it. */
  closedByServerAt?: number;
}

export interface RealtimeConnection {
  readonly label: string;
  /** The URL connected to (socket.io: the Engine.IO URL; the namespace is in the channel's name). */
  readonly url: string;
  readonly protocol: ChannelProtocol;
  readonly frames: readonly Frame[];
  readonly outcome: SocketOutcome;
  readonly bytesReceived: number;
  readonly framesReceived: number;
  readonly isOpen: boolean;
  /** Plain WebSocket: one frame (JSON unless a string). socket.io: emits `event` (default `message`). */
  send(value: unknown, event?: string): void;
  /** Stops reading from the network: the server's writes pile up in buffers (a slow consumer). */
  pause(): void;
  resume(): void;
  /** Messages received from `since` (probe clock) on. */
  received(since?: number): Frame[];
  /** The first received message from `since` on that satisfies `predicate`, waiting at most `timeoutMs`. */
  waitFor(
    predicate: (frame: Frame) => boolean,
    timeoutMs: number,
    since?: number,
  ): Promise<Frame | undefined>;
  /** Waits until no message has arrived for `quietMs` (at most `maxMs`). */
  settle(quietMs: number, maxMs: number): Promise<void>;
  /** Closes politely, then forcibly if the close does not finish in time. */
  close(): Promise<void>;
  /** Cuts the connection without a goodbye, as a network drop does. */
  drop(): Promise<void>;
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

export function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

/** The frame log and the waiting every connection shares; subclasses feed it what they send and receive. */
export abstract class ObservedConnection implements RealtimeConnection {
  readonly frames: Frame[] = [];
  readonly outcome: SocketOutcome = { opened: false };
  bytesReceived = 0;
  framesReceived = 0;
  protected closingByProbe = false;
  private readonly listeners = new Set<() => void>();

  protected constructor(
    readonly label: string,
    readonly url: string,
    readonly protocol: ChannelProtocol,
    protected readonly clock: () => number,
    private readonly maxFrames: number,
  ) {}

  abstract get isOpen(): boolean;
  abstract send(value: unknown, event?: string): void;
  abstract pause(): void;
  abstract resume(): void;
  abstract close(): Promise<void>;
  abstract drop(): Promise<void>;

  received(since = 0): Frame[] {
    return this.frames.filter((frame) => frame.direction === "in" && frame.at >= since);
  }

  /**
   * How long measurement windows have been held in all, run-wide (see quiet-window.ts): while another
   * agent measures, the target may be busy for it, so every wait of this connection is extended by it.
   */
  stalls: () => number = () => 0;

  waitFor(predicate: (frame: Frame) => boolean, timeoutMs: number, since = 0): Promise<Frame | undefined> {
    const found = (): Frame | undefined => this.received(since).find(predicate);
    const already = found();
    if (already || timeoutMs <= 0) return Promise.resolve(already);
    const extension = stallExtension(this.stalls);
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
      const expire = (): void => {
        const more = extension();
        if (more > 0) timer = setTimeout(expire, more);
        // A timer runs before the loop reads sockets: on a busy machine a frame already delivered would miss
        // the wait judged at that moment, so what the network brought meanwhile is read first.
        else setImmediate(() => finish(found()));
      };
      let timer = setTimeout(expire, timeoutMs);
      this.listeners.add(check);
    });
  }

  async settle(quietMs: number, maxMs: number): Promise<void> {
    let deadline = this.clock() + maxMs;
    const extension = stallExtension(this.stalls);
    let seen = this.framesReceived;
    let stalled = this.stalls();
    for (;;) {
      if (this.clock() >= deadline) {
        const more = extension();
        if (more <= 0) return;
        deadline += more;
      }
      await delay(Math.min(quietMs, Math.max(0, deadline - this.clock())));
      // A window held meanwhile is no quiet: the target was busy elsewhere, not done sending.
      const now = this.stalls();
      if (this.framesReceived === seen && now === stalled) return;
      seen = this.framesReceived;
      stalled = now;
    }
  }

  /** Records the server closing the connection (not the probe). */
  protected closedByServer(code: number | undefined, reason: string): void {
    if (code !== undefined) this.outcome.closeCode = code;
    this.outcome.closeReason = reason.slice(0, 200);
    if (!this.closingByProbe) this.outcome.closedByServerAt ??= this.clock();
    this.notify();
  }

  protected logFrame(
    direction: Frame["direction"],
    text: string,
    bytes: number,
    extra: { event?: string; json?: unknown } = {},
  ): void {
    if (direction === "in") this.framesReceived += 1;
    if (this.frames.length < this.maxFrames) {
      const kept =
        text.length > MAX_FRAME_TEXT ? `${text.slice(0, MAX_FRAME_TEXT)}…[${text.length} chars]` : text;
      const complete = kept === text;
      this.frames.push({
        at: this.clock(),
        direction,
        ...(extra.event !== undefined ? { event: extra.event } : {}),
        text: kept,
        json: !complete ? undefined : "json" in extra ? extra.json : parseJson(text),
        bytes,
      });
    }
    if (direction === "in") this.notify();
  }

  protected notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The longest a wait is extended for others' measurement windows: a window outliving this is stuck. */
const MAX_STALL_EXTENSION_MS = 15_000;

/**
 * From now on, how much longer a wait must go on for the windows held since the last call: each call
 * answers the window time not yet granted (0 when none), up to MAX_STALL_EXTENSION_MS in all.
 */
export function stallExtension(stalls: () => number): () => number {
  const start = stalls();
  let granted = 0;
  return () => {
    const owed = Math.min(stalls() - start, MAX_STALL_EXTENSION_MS);
    const more = Math.max(0, Math.ceil(owed - granted));
    granted += more;
    return more;
  };
}

/** `delay(ms)`, extended by the measurement windows held meanwhile (see `stalls`). */
export async function patientDelay(ms: number, stalls: () => number): Promise<void> {
  const extension = stallExtension(stalls);
  let wait = ms;
  while (wait > 0) {
    await delay(wait);
    wait = extension();
  }
}
