import type { RunContext } from "../../tools/context.ts";

// Measurement windows over the target. A probe that times a request or reads the target's statement log
// around it needs the target to itself for that moment, not for the whole of its run: while one client
// holds a window, every other client's requests wait before they are sent, and the window opens only once
// their requests already in flight have answered. So a measuring agent could run beside the others and
// still measure what its own request cost, the others losing only the moments it measures. A slow handler
// being timed may keep a single-threaded target busy for everyone, sockets included: socket handshakes
// enter like requests, and waits for frames extend by the time spent measuring (`heldMs`). Windows are meant to
// be short (one request and its log): waits are bounded, so a window that outlives its purpose costs a
// little precision (which the measurements tolerate: minima, repeats) and never hangs the run.

/** Whoever sends: an HttpClient (one per tool call). Identity is all that is used. */
type Sender = object;

/**
 * The longest a request waits for someone else's window before it is sent anyway. A holder can wait on a
 * request that waits on its window (the run's pacing lets one request of a slow operation out at a time),
 * and that must cost a moment, never the run.
 */
const MAX_WAIT_MS = 5_000;
/** The longest a window waits for others' requests in flight to answer (a stalled one times out at 10 s). */
const MAX_DRAIN_MS = 12_000;

export class QuietWindows {
  private readonly inFlight = new Map<Sender, number>();
  /** Senders inside `together`: their requests pass every window, and no window opens until they end. */
  private readonly bursting = new Map<Sender, number>();
  private holder: Sender | undefined;
  private closed: Promise<void> = Promise.resolve();
  private drained: (() => void) | undefined;
  private heldTotal = 0;
  private measuringSince: number | undefined;
  /** Requests that waited for a window, and for how long in all (the cost the others paid). */
  readonly stats = { windows: 0, waited_requests: 0, waited_ms: 0, drain_ms: 0 };

  constructor(private readonly bounds = { maxWaitMs: MAX_WAIT_MS, maxDrainMs: MAX_DRAIN_MS }) {}

  /** Called before a request is sent; answers the function to call once it has been answered. */
  async enter(sender: Sender, options: { bypass?: boolean } = {}): Promise<() => void> {
    if (!options.bypass && !this.bursting.has(sender)) await this.outsideWindows(sender);
    this.inFlight.set(sender, (this.inFlight.get(sender) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const count = (this.inFlight.get(sender) ?? 1) - 1;
      if (count > 0) this.inFlight.set(sender, count);
      else this.inFlight.delete(sender);
      this.checkDrained();
    };
  }

  /**
   * Runs `burst` (requests that must reach the target at the same moment: a race, a concurrent burst) so
   * that no window splits it: it starts outside any window, and a window waits until it has ended.
   */
  async together<Result>(sender: Sender, burst: () => Promise<Result>): Promise<Result> {
    if (!this.bursting.has(sender)) await this.outsideWindows(sender);
    this.bursting.set(sender, (this.bursting.get(sender) ?? 0) + 1);
    try {
      return await burst();
    } finally {
      const count = (this.bursting.get(sender) ?? 1) - 1;
      if (count > 0) this.bursting.set(sender, count);
      else this.bursting.delete(sender);
      this.checkDrained();
    }
  }

  /**
   * Runs `measure` with the target to `sender` alone: others' new requests wait, and it starts once their
   * requests in flight have answered. Windows do not nest across senders: a second holder waits its turn.
   */
  async hold<Result>(sender: Sender, measure: () => Promise<Result>): Promise<Result> {
    if (this.holder === sender) return measure();
    // Requests that waited for the last window go first: without this turn, back-to-back windows of one
    // holder would let nobody else through until their waits ran out.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.holder !== undefined) await this.closed;
    this.holder = sender;
    this.stats.windows += 1;
    let close!: () => void;
    this.closed = new Promise((resolve) => {
      close = resolve;
    });
    try {
      if (this.othersBusy(sender)) {
        const draining = performance.now();
        await atMost(
          new Promise<void>((resolve) => {
            this.drained = resolve;
          }),
          this.bounds.maxDrainMs,
        );
        this.stats.drain_ms += performance.now() - draining;
      }
      this.drained = undefined;
      this.measuringSince = performance.now();
      return await measure();
    } finally {
      if (this.measuringSince !== undefined) this.heldTotal += performance.now() - this.measuringSince;
      this.measuringSince = undefined;
      this.drained = undefined;
      this.holder = undefined;
      close();
    }
  }

  /**
   * Run-wide so far: windows opened, time spent measuring in them, time spent waiting for others' requests
   * in flight before measuring (the target half idle), and what the others waited.
   */
  report(): {
    windows: number;
    held_ms: number;
    drain_ms: number;
    waited_requests: number;
    waited_ms: number;
  } {
    return {
      windows: this.stats.windows,
      held_ms: Math.round(this.heldMs()),
      drain_ms: Math.round(this.stats.drain_ms),
      waited_requests: this.stats.waited_requests,
      waited_ms: this.stats.waited_ms,
    };
  }

  /**
   * Milliseconds spent measuring inside windows so far (the current one up to now). What is measured may
   * keep a single-threaded target busy for everyone, so waits for what the target sends on its own (a
   * socket's frames) extend themselves by it.
   */
  heldMs(): number {
    return this.heldTotal + (this.measuringSince === undefined ? 0 : performance.now() - this.measuringSince);
  }

  /**
   * Waits until no window is open (`maxWaitMs` at most), sending nothing. For work that costs the machine
   * rather than the target (a browser rendering a page): started inside a window, it would slow what the
   * window times on a small machine.
   */
  async betweenWindows(): Promise<void> {
    const started = Date.now();
    while (this.holder !== undefined && Date.now() - started < this.bounds.maxWaitMs) {
      await atMost(this.closed, this.bounds.maxWaitMs - (Date.now() - started));
    }
  }

  /** Waits while another sender's window is open, `maxWaitMs` at most. */
  private async outsideWindows(sender: Sender): Promise<void> {
    if (this.holder === undefined || this.holder === sender) return;
    const started = Date.now();
    const { maxWaitMs } = this.bounds;
    while (this.holder !== undefined && this.holder !== sender && Date.now() - started < maxWaitMs) {
      await atMost(this.closed, maxWaitMs - (Date.now() - started));
    }
    this.stats.waited_requests += 1;
    this.stats.waited_ms += Date.now() - started;
  }

  private checkDrained(): void {
    if (this.drained && !this.othersBusy(this.holder)) this.drained();
  }

  /** Whether a sender other than `sender` has a request in flight or a burst under way. */
  private othersBusy(sender: Sender | undefined): boolean {
    for (const [other, requests] of this.inFlight) if (other !== sender && requests > 0) return true;
    for (const other of this.bursting.keys()) if (other !== sender) return true;
    return false;
  }
}

/** Waits for `event`, or `ms` at most (the timer cleared either way). */
async function atMost(event: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      event,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms)))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The run-wide windows over the target (one per run: every agent's clients share it). */
export function quietWindowsOf(context: RunContext): QuietWindows {
  const key = "http:quiet-windows";
  let windows = context.shared.get(key) as QuietWindows | undefined;
  if (!windows) {
    windows = new QuietWindows();
    context.shared.set(key, windows);
  }
  return windows;
}
