import type { RunContext } from "../../tools/context.ts";

// The realtime probes of a run share the target while they probe at once, but one measurement cannot share
// it: who learns that a user came online (presence). That needs nobody else of the run connected while its
// listeners join (a user already online is in their snapshot, and is not announced again when the probe
// connects them: a miss), and nobody connecting or writing while it listens (another socket's arrival or a
// write's frame naming the user would be taken for the announcement: a false leak). So each probe holds its
// channel work in `share`, and that measurement runs in `alone`: it waits until the others' channel work
// has ended, and their next channel work waits for it. Waits are bounded: a section that outlives them
// costs that measurement's precision, never the run.

/** Whoever probes: one realtime run (one tool call). Identity is all that is used. */
type Holder = object;

/** The longest an `alone` section waits for the others' channel work to end. */
const MAX_DRAIN_MS = 90_000;
/** The longest channel work waits for others' `alone` sections. */
const MAX_WAIT_MS = 60_000;
/** How long an `alone` section lets the target notice the sockets the others just closed. */
const GRACE_MS = 200;

export class ArrivalGate {
  private readonly sharing = new Map<Holder, number>();
  /** Holders waiting for, or in, an `alone` section: they hold no socket meanwhile. */
  private readonly waitingAlone = new Set<Holder>();
  private aloneHolder: Holder | undefined;
  private changed: Promise<void> = Promise.resolve();
  private signal: () => void = () => {};

  constructor(
    private readonly bounds = { maxDrainMs: MAX_DRAIN_MS, maxWaitMs: MAX_WAIT_MS, graceMs: GRACE_MS },
  ) {
    this.renew();
  }

  /** Runs channel work (sockets open, events caused) beside the others', outside their `alone` sections. */
  async share<Result>(holder: Holder, work: () => Promise<Result>): Promise<Result> {
    if (!this.sharing.has(holder)) {
      await this.until(() => !this.othersAlone(holder), this.bounds.maxWaitMs);
    }
    this.sharing.set(holder, (this.sharing.get(holder) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const count = (this.sharing.get(holder) ?? 1) - 1;
      if (count > 0) this.sharing.set(holder, count);
      else this.sharing.delete(holder);
      this.wake();
    }
  }

  /**
   * Runs `measure` with no other holder's channel work under way: the others' new work waits from the moment
   * it asks, and it starts once their work has ended. The holder must have no socket open when it asks.
   */
  async alone<Result>(holder: Holder, measure: () => Promise<Result>): Promise<Result> {
    if (this.aloneHolder === holder) return measure();
    this.waitingAlone.add(holder);
    this.wake();
    try {
      const waited = this.othersSharing(holder);
      await this.until(
        () => this.aloneHolder === undefined && !this.othersSharing(holder),
        this.bounds.maxDrainMs,
      );
      // The others' sockets have closed on this side; the target notices a moment later (a user it still
      // counts online would be in the listeners' first snapshot, and not announced again).
      if (waited) await new Promise((resolve) => setTimeout(resolve, this.bounds.graceMs));
      // Past the bound another `alone` may still run: the two take turns rather than wait forever.
      while (this.aloneHolder !== undefined) await this.changed;
      this.aloneHolder = holder;
      return await measure();
    } finally {
      if (this.aloneHolder === holder) this.aloneHolder = undefined;
      this.waitingAlone.delete(holder);
      this.wake();
    }
  }

  /**
   * Claims the holder's turn before it has begun (it holds no socket yet): channel work that others start
   * from now on waits for its first `alone` section, instead of that section waiting for all of theirs.
   */
  reserve(holder: Holder): void {
    this.waitingAlone.add(holder);
  }

  /** Gives up a claim the holder never used (it found nothing to measure). */
  release(holder: Holder): void {
    if (this.aloneHolder === holder || !this.waitingAlone.delete(holder)) return;
    this.wake();
  }

  /** Whether another holder is in, or waiting for, an `alone` section. */
  private othersAlone(holder: Holder): boolean {
    for (const other of this.waitingAlone) if (other !== holder) return true;
    return false;
  }

  /** Whether another holder's channel work is under way (one waiting to be alone holds no socket). */
  private othersSharing(holder: Holder): boolean {
    for (const other of this.sharing.keys())
      if (other !== holder && !this.waitingAlone.has(other)) return true;
    return false;
  }

  private async until(ready: () => boolean, maxMs: number): Promise<void> {
    const started = Date.now();
    while (!ready()) {
      const left = maxMs - (Date.now() - started);
      if (left <= 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.changed, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  }

  private wake(): void {
    const signal = this.signal;
    this.renew();
    signal();
  }

  private renew(): void {
    this.changed = new Promise((resolve) => {
      this.signal = resolve;
    });
  }
}

/** The run-wide gate (one per run and target: every realtime probe of the run shares it). */
export function arrivalGateOf(context: RunContext, baseUrl: string): ArrivalGate {
  const key = `realtime:arrival-gate:${baseUrl}`;
  let gate = context.shared.get(key) as ArrivalGate | undefined;
  if (!gate) {
    gate = new ArrivalGate();
    context.shared.set(key, gate);
  }
  return gate;
}
