import type { ToolContext } from "../../tools/context.ts";

// Measurement windows over the target. A probe that times a request or reads the target's statement log
// around it needs the target to itself for that moment, not for the whole of its run: while one client
// holds a window, every other client's requests wait before they are sent, and the window opens only once
// their requests already in flight have answered. So LOAD runs beside the other agents and still measures
// what its own request cost, and the others lose only the moments it is measuring. Windows are meant to
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
  private holder: Sender | undefined;
  private closed: Promise<void> = Promise.resolve();
  private drained: (() => void) | undefined;
  /** Requests that waited for a window, and for how long in all (the cost the others paid). */
  readonly stats = { windows: 0, waited_requests: 0, waited_ms: 0 };

  constructor(private readonly bounds = { maxWaitMs: MAX_WAIT_MS, maxDrainMs: MAX_DRAIN_MS }) {}

  /** Called before a request is sent; answers the function to call once it has been answered. */
  async enter(sender: Sender, options: { bypass?: boolean } = {}): Promise<() => void> {
    if (!options.bypass && this.holder !== undefined && this.holder !== sender) {
      const started = Date.now();
      const { maxWaitMs } = this.bounds;
      while (this.holder !== undefined && this.holder !== sender && Date.now() - started < maxWaitMs) {
        await atMost(this.closed, maxWaitMs - (Date.now() - started));
      }
      this.stats.waited_requests += 1;
      this.stats.waited_ms += Date.now() - started;
    }
    this.inFlight.set(sender, (this.inFlight.get(sender) ?? 0) + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const count = (this.inFlight.get(sender) ?? 1) - 1;
      if (count > 0) this.inFlight.set(sender, count);
      else this.inFlight.delete(sender);
      if (this.drained && this.othersInFlight(this.holder) === 0) this.drained();
    };
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
      if (this.othersInFlight(sender) > 0) {
        await atMost(
          new Promise<void>((resolve) => {
            this.drained = resolve;
          }),
          this.bounds.maxDrainMs,
        );
      }
      this.drained = undefined;
      return await measure();
    } finally {
      this.drained = undefined;
      this.holder = undefined;
      close();
    }
  }

  private othersInFlight(sender: Sender | undefined): number {
    let count = 0;
    for (const [other, requests] of this.inFlight) if (other !== sender) count += requests;
    return count;
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
export function quietWindowsOf(context: ToolContext): QuietWindows {
  const key = "http:quiet-windows";
  let windows = context.shared.get(key) as QuietWindows | undefined;
  if (!windows) {
    windows = new QuietWindows();
    context.shared.set(key, windows);
  }
  return windows;
}
