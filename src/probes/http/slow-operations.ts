import { AsyncLocalStorage } from "node:async_hooks";
import type { RunContext } from "../../tools/context.ts";

// A handler that takes seconds (a heavy report, a slow query) can stall a single-threaded target for every
// request in flight, so "slow" must be told apart from "stuck behind something slow". Slow answers that
// arrive together form one stall; the request that answered first caused it (the others were queued behind
// it and answer only once it is done, even one sent a moment before it), and only its operation counts as
// slow. A slow answer that arrives alone is slow on its own.
//   - The first request to an operation goes alone for that operation (others to it wait for its answer);
//     so does every request to an operation under suspicion.
//   - While a stall is being judged (a fraction of a second), new requests wait.
//   - "Slow" is measured against the run's own pace: ten times the median answer, at least 1.5 s, so a
//     busy machine or a remote target does not make every operation look slow.
//   - One slow answer makes an operation suspect; a second in a row makes it slow, and it gets no further
//     request, from any probe, for half a minute; then one request re-tests it and a normal answer lifts
//     the ban. One very slow answer bans it for eight minutes at once (a timing probe still reaches it, and
//     counts what the others saw). A re-test that is slow again doubles the ban (up to eight minutes):
//     each re-test of a handler that takes seconds freezes a single-threaded target for every probe. A normal answer always clears suspicion: a single slow answer on a
//     loaded machine must not take an operation away from every probe for the rest of the run.
// A probe that measures time asks for its delay (a bounded `sleep 1` in a payload): inside
// `withIntendedDelay` that delay is not the operation's slowness, and neither is a stall it explains in a
// request queued behind it — or the probe's own zero-second controls and baselines, which must alternate
// with its sleeps, would be refused once the first sleep answered.

const SLOW_MS = 1500;
/** How many times the run's median answer an answer must take to count as slow. */
const PACE_FACTOR = 10;
/** An answer this many times the threshold is slow on its own, without a second strike. */
const VERY_SLOW_FACTOR = 3;
const STRIKES = 2;
/** Successful answers remembered per operation. */
const ANSWERS_KEPT = 5;
/** How long a slow operation is left alone before one request re-tests it; doubled per slow re-test. */
const BAN_MS = 30_000;
const MAX_BAN_MS = 480_000;
/** How many recent answers the run's pace is the median of. */
const PACE_WINDOW = 101;
/** Slow answers this close together belong to one stall. */
const STALL_WINDOW_MS = 250;
/** How long an intended delay is remembered to explain stalls of requests queued behind it. */
const INTENDED_MEMORY_MS = 30_000;

interface Entry {
  /** Requests to it go one at a time: it is new, or under suspicion. */
  solo: boolean;
  inFlight: Promise<void> | undefined;
  release: () => void;
  strikes: number;
  slow: boolean;
  bannedAt: number;
  banMs: number;
  retesting: boolean;
  skipped: number;
  /** How long the answers that made it slow (or kept it so) took, first few. */
  slowAnswersMs: number[];
  /** The last few successful answers' durations, whoever asked: what a timing probe can skip on. */
  answeredMs: number[];
  /** It has answered under the slow threshold: in a stall, more likely queued than the cause. */
  answeredAtPace: boolean;
  /** The first few answers judged the cause of a stall: when they started, and their own time. */
  culpritAnswers: Array<{ startedAt: number; ms: number }>;
}

interface Answer {
  key: string;
  startedAt: number;
  endedAt: number;
  /** The threshold it was judged against. */
  thresholdMs: number;
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
  private readonly recent: number[] = [];

  /** `now` is the clock of `culpritAnswersSince`: performance.now() unless a test gives its own. */
  constructor(readonly now: () => number = () => performance.now()) {}

  /** Waits for the operation's turn; false while the operation is known slow. */
  async enter(key: string): Promise<boolean> {
    if (this.judging) await this.judging;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = newEntry(true);
      this.entries.set(key, entry);
    }
    for (;;) {
      if (entry.slow) {
        if (entry.retesting || this.now() - entry.bannedAt < entry.banMs) {
          entry.skipped += 1;
          return false;
        }
        entry.retesting = true;
      } else if (entry.solo && entry.inFlight) {
        await entry.inFlight;
        if (this.judging) await this.judging;
        continue;
      }
      break;
    }
    if (entry.solo || entry.retesting) {
      entry.inFlight = new Promise<void>((resolve) => {
        entry.release = resolve;
      });
    }
    return true;
  }

  /**
   * Records an answer; `delayMs` (default: the delay of the enclosing `withIntendedDelay`) was asked for.
   * Without a duration (nothing was sent, or nothing came back) the turn passes on and nothing is judged.
   */
  leave(key: string, durationMs: number | undefined, delayMs: number = intendedDelay.getStore() ?? 0): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    if (durationMs !== undefined) this.record(key, entry, durationMs, delayMs, true);
    this.pass(entry);
  }

  /** Judges one answer: `turn` when the request held the operation's turn (an unpaced one did not). */
  private record(key: string, entry: Entry, durationMs: number, delayMs: number, turn: boolean): void {
    const endedAt = this.now();
    const threshold = this.threshold();
    const ownMs = durationMs - delayMs;
    const answer = { key, startedAt: endedAt - durationMs, endedAt, thresholdMs: threshold };
    this.remember(ownMs);
    if (delayMs > 0) {
      this.intended = this.intended.filter(
        (earlier) => earlier.answer.endedAt > endedAt - INTENDED_MEMORY_MS,
      );
      this.intended.push({ answer, delayMs });
    }
    if (ownMs >= threshold) {
      this.cohort.push(answer);
      this.judging ??= new Promise<void>((resolve) =>
        setTimeout(() => resolve(this.judge()), STALL_WINDOW_MS),
      );
      if (turn && entry.retesting) {
        entry.bannedAt = endedAt;
        remember(entry, ownMs);
        entry.banMs = Math.min(MAX_BAN_MS, entry.banMs * 2);
      }
    } else {
      entry.answeredAtPace = true;
      entry.strikes = 0;
      entry.solo = false;
      entry.slow = false;
      entry.banMs = BAN_MS;
    }
  }

  /**
   * Records the answer of a request sent outside the pacing (a timing probe's): it takes no turn and is
   * never refused, but a stall it causes is blamed on it, not on the requests queued behind it.
   */
  observe(key: string, durationMs: number | undefined): void {
    if (durationMs === undefined) return;
    let entry = this.entries.get(key);
    if (!entry) {
      entry = newEntry(false);
      this.entries.set(key, entry);
    }
    // Another probe's request may hold the operation's turn: it keeps it.
    this.record(key, entry, durationMs, intendedDelay.getStore() ?? 0, false);
  }

  /** Ends the request's turn: the next request to the operation may go. */
  private pass(entry: Entry): void {
    entry.retesting = false;
    const release = entry.release;
    entry.inFlight = undefined;
    entry.release = () => {};
    release();
  }

  /** Whether an answer this long is slow by the run's pace (what makes an operation suspect). */
  isSlowAnswer(durationMs: number): boolean {
    return durationMs >= this.threshold();
  }

  private threshold(): number {
    if (this.recent.length < 5) return SLOW_MS;
    const sorted = [...this.recent].sort((a, b) => a - b);
    return Math.max(SLOW_MS, PACE_FACTOR * sorted[Math.floor(sorted.length / 2)]!);
  }

  private remember(ms: number): void {
    this.recent.push(Math.max(0, ms));
    if (this.recent.length > PACE_WINDOW) this.recent.shift();
  }

  private judge(): void {
    const culprit = this.culpritOf(this.cohort);
    const entry = culprit ? this.entries.get(culprit.key) : undefined;
    if (culprit && entry && !this.explained(culprit)) {
      entry.strikes += 1;
      entry.solo = true;
      const ownMs = culprit.endedAt - culprit.startedAt - this.intendedFor(culprit);
      if (entry.culpritAnswers.length < ANSWERS_KEPT)
        entry.culpritAnswers.push({ startedAt: culprit.startedAt, ms: Math.round(ownMs) });
      const verySlow = ownMs >= VERY_SLOW_FACTOR * culprit.thresholdMs;
      if (entry.strikes >= STRIKES || verySlow) {
        entry.slow = true;
        entry.bannedAt = culprit.endedAt;
        // Seconds of work per request is no noise: re-testing it would only freeze the target again.
        if (verySlow) entry.banMs = MAX_BAN_MS;
        remember(entry, ownMs);
      }
    }
    this.cohort = [];
    this.judging = undefined;
  }

  /**
   * The answer that held the server: the first to end. When a handler blocks a single-threaded target, the
   * answers queued behind it all end within milliseconds of it, so that order is noise; an operation that
   * answered at the run's pace a moment ago was queued, so one that has not is blamed first.
   */
  private culpritOf(cohort: readonly Answer[]): Answer | undefined {
    const byEnd = [...cohort].sort((a, b) => a.endedAt - b.endedAt || a.startedAt - b.startedAt);
    return byEnd.find((answer) => !this.entries.get(answer.key)?.answeredAtPace) ?? byEnd[0];
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
    return explainedMs > 0 && answer.endedAt - answer.startedAt - explainedMs < answer.thresholdMs;
  }

  /** The delay the answer itself asked for. */
  private intendedFor(answer: Answer): number {
    return this.intended.find((item) => item.answer === answer)?.delayMs ?? 0;
  }

  /** Records how long a successful (2xx) answer of the operation took, for `answeredOf`. */
  answered(key: string, durationMs: number): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.answeredMs.push(Math.round(durationMs));
    if (entry.answeredMs.length > ANSWERS_KEPT) entry.answeredMs.shift();
  }

  /** Whether the operation is left alone now for being slow (`enter` would answer false). */
  isPacedOut(key: string): boolean {
    const entry = this.entries.get(key);
    return entry?.slow === true && (entry.retesting || this.now() - entry.bannedAt < entry.banMs);
  }

  /** The last few successful answers of the operation the run's probes got, in milliseconds. */
  answeredOf(key: string): number[] {
    return [...(this.entries.get(key)?.answeredMs ?? [])];
  }

  /**
   * How long the answers took that made the operation slow, while it is: what the run's other probes saw,
   * a measurement a timing probe can count beside its own.
   */
  slowAnswersOf(key: string): number[] {
    const entry = this.entries.get(key);
    return entry?.slow ? [...entry.slowAnswersMs] : [];
  }

  /**
   * How long the answers took that were sent from `since` on (by the run's clock, `now`) and judged the
   * cause of a stall: slow on their own, as the operation's own second signal for a timing probe.
   */
  culpritAnswersSince(key: string, since: number): number[] {
    const answers = this.entries.get(key)?.culpritAnswers ?? [];
    return answers.filter((answer) => answer.startedAt >= since).map((answer) => answer.ms);
  }

  /** Waits for the request that holds the operation's turn, if one does, and for the stall it may end. */
  async settled(key: string): Promise<void> {
    const inFlight = this.entries.get(key)?.inFlight;
    if (inFlight) await inFlight;
    if (this.judging) await this.judging;
  }

  /** Operations found slow, with the requests to each that were skipped. */
  report(): Record<string, number> {
    return Object.fromEntries(
      [...this.entries].filter(([, entry]) => entry.slow).map(([key, entry]) => [key, entry.skipped]),
    );
  }
}

function newEntry(solo: boolean): Entry {
  return {
    solo,
    inFlight: undefined,
    release: () => {},
    strikes: 0,
    slow: false,
    bannedAt: 0,
    banMs: BAN_MS,
    retesting: false,
    skipped: 0,
    slowAnswersMs: [],
    answeredMs: [],
    answeredAtPace: false,
    culpritAnswers: [],
  };
}

function remember(entry: Entry, ms: number): void {
  if (entry.slowAnswersMs.length < 5) entry.slowAnswersMs.push(Math.round(ms));
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
