import type { RunContext } from "../../tools/context.ts";

// A handler that takes seconds (a heavy report, a slow query) can stall a single-threaded target for every
// request in flight, so "slow" must be told apart from "stuck behind something slow". Slow answers that
// arrive together form one stall; the request that answered first caused it (the others were queued behind
// it and answer only once it is done, even one sent a moment before it), and only its operation counts as
// slow. A slow answer that arrives alone is slow on its own.
//   - The first request to an operation goes alone for that operation (others to it wait for its answer).
//   - While a stall is being judged (a fraction of a second), new requests wait.
//   - An operation found slow gets no further request for the rest of the run, from any probe.

const SLOW_MS = 1500;
/** Slow answers this close together belong to one stall. */
const STALL_WINDOW_MS = 250;

interface Entry {
  answered: boolean;
  first: Promise<void>;
  release: () => void;
  slow: boolean;
  skipped: number;
}

export class SlowOperations {
  private readonly entries = new Map<string, Entry>();
  private cohort: Array<{ key: string; startedAt: number; endedAt: number }> = [];
  private judging: Promise<void> | undefined;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Waits until the operation's first request has answered; false once the operation is known slow. */
  async enter(key: string): Promise<boolean> {
    if (this.judging) await this.judging;
    const entry = this.entries.get(key);
    if (!entry) {
      let release = () => {};
      const first = new Promise<void>((resolve) => {
        release = resolve;
      });
      this.entries.set(key, { answered: false, first, release, slow: false, skipped: 0 });
      return true;
    }
    await entry.first;
    if (this.judging) await this.judging;
    if (!entry.slow) return true;
    entry.skipped += 1;
    return false;
  }

  leave(key: string, durationMs: number): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    if (durationMs >= SLOW_MS) {
      const endedAt = this.now();
      this.cohort.push({ key, startedAt: endedAt - durationMs, endedAt });
      this.judging ??= new Promise<void>((resolve) =>
        setTimeout(() => resolve(this.judge()), STALL_WINDOW_MS),
      );
    }
    if (!entry.answered) {
      entry.answered = true;
      entry.release();
    }
  }

  private judge(): void {
    const culprit = [...this.cohort].sort((a, b) => a.endedAt - b.endedAt || a.startedAt - b.startedAt)[0];
    const entry = culprit ? this.entries.get(culprit.key) : undefined;
    if (entry) entry.slow = true;
    this.cohort = [];
    this.judging = undefined;
  }

  /** Operations found slow, with the requests to each that were skipped. */
  report(): Record<string, number> {
    return Object.fromEntries(
      [...this.entries].filter(([, entry]) => entry.slow).map(([key, entry]) => [key, entry.skipped]),
    );
  }
}

export function slowOperationsFor(context: RunContext): SlowOperations {
  const key = "http:slow-operations";
  let registry = context.shared.get(key) as SlowOperations | undefined;
  if (!registry) {
    registry = new SlowOperations();
    context.shared.set(key, registry);
  }
  return registry;
}
