import { AsyncLocalStorage } from "node:async_hooks";
import type { RunContext } from "../../tools/context.ts";

// A handler that takes seconds (a heavy report, a slow query) can stall a single-threaded target for every
// request in flight, so "slow" must be told apart from "stuck behind something slow". Slow answers that
// arrive together form one stall; the request that answered first caused it (the others were queued behind
// it and answer only once it is done, even one sent a moment before it), and only its operation counts as
// slow. A slow answer that arrives alone is slow on its own.
//   - The first request to an operation goes alone for that operation (others to it wait for its answer).
//   - While a stall is being judged (a fraction of a second), new requests wait.
//   - An operation found slow gets no further request for the rest of the run, from any probe.
// A probe that measures time asks for its delay (a bounded `sleep 1` in a payload): inside
// `withIntendedDelay` that delay is not the operation's slowness, and neither is a stall it explains in a
// request queued behind it — or the probe's own zero-second controls and baselines, which must alternate
// with its sleeps, would be refused once the first sleep answered.

const SLOW_MS = 1500;
/** Slow answers this close together belong to one stall. */
const STALL_WINDOW_MS = 250;
/** How long an intended delay is remembered to explain stalls of requests queued behind it. */
const INTENDED_MEMORY_MS = 30_000;

interface Entry {
  answered: boolean;
  first: Promise<void>;
  release: () => void;
  slow: boolean;
  skipped: number;
}

interface Answer {
  key: string;
  startedAt: number;
  endedAt: number;
}

interface Intended {
  answer: Answer;
  delayMs: number;
}

const intendedDelay = new AsyncLocalStorage<number>();

/**
 * Runs `send` as a request the probe expects to take `delayMs` longer than usual (at most a few seconds):
 * the pacing judges the operation by what is left once that delay is taken off.
 */
export function withIntendedDelay<T>(delayMs: number, send: () => Promise<T>): Promise<T> {
  if (!(delayMs >= 0 && delayMs <= 5000))
    throw new Error(`withIntendedDelay: ${delayMs} ms is not a bounded delay`);
  return intendedDelay.run(delayMs, send);
}

export class SlowOperations {
  private readonly entries = new Map<string, Entry>();
  private cohort: Answer[] = [];
  private intended: Intended[] = [];
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

  /** Records an answer; `delayMs` (default: the delay of the enclosing `withIntendedDelay`) was asked for. */
  leave(key: string, durationMs: number, delayMs: number = intendedDelay.getStore() ?? 0): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    const endedAt = this.now();
    const answer = { key, startedAt: endedAt - durationMs, endedAt };
    if (delayMs > 0) {
      this.intended = this.intended.filter(
        (earlier) => earlier.answer.endedAt > endedAt - INTENDED_MEMORY_MS,
      );
      this.intended.push({ answer, delayMs });
    }
    if (durationMs - delayMs >= SLOW_MS) {
      this.cohort.push(answer);
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
    if (culprit && entry && !this.explained(culprit)) entry.slow = true;
    this.cohort = [];
    this.judging = undefined;
  }

  /**
   * Whether intended delays running beside the answer (a sleep that held the server while this request
   * waited) account for its slowness: its duration, less the delays that overlapped it, is not slow.
   */
  private explained(answer: Answer): boolean {
    let explainedMs = 0;
    for (const { answer: other, delayMs } of this.intended) {
      if (other === answer) continue;
      const overlapMs = Math.min(other.endedAt, answer.endedAt) - Math.max(other.startedAt, answer.startedAt);
      if (overlapMs > 0) explainedMs += Math.min(delayMs, overlapMs);
    }
    return explainedMs > 0 && answer.endedAt - answer.startedAt - explainedMs < SLOW_MS;
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
