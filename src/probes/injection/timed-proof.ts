import type { RunContext } from "../../tools/context.ts";
import { withIntendedDelay } from "../http/slow-operations.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { OpenPoint, Sent } from "./point-sender.ts";
import { sendAt } from "./point-sender.ts";

// Blind proof by time: a payload asking for a one-second sleep must delay the answer by about a second,
// three times, while the same payload asking for no sleep must not, each alternating with the other. Three
// alternations rule out a busy machine's stalls landing by chance on every sleep and no control. The sleeps
// are sent as intended delays (the run's pacing must not refuse the operation for them), and one point is
// timed at a time run-wide: two timed points would slow each other's controls.

/** The one-second sleep must add this much to the slowest baseline… */
const SLEPT_OVER_BASELINE_MS = 900;
/** …and its zero-second control must stay this close to it. */
const CONTROL_OVER_BASELINE_MS = 400;
const SLEEP_MS = 1000;

export interface TimedShot {
  label: string;
  sent: Sent;
}

export interface TimedProof {
  evidence: TimedShot[];
  baselineMs: number;
  sleptMs: number[];
  controlMs: number[];
}

/**
 * The ordinary answer time: the middle of the point's baseline and two fresh plain requests. Not the
 * slowest: the first request to a point often pays for a cold path (a connection, a cache, a compiled
 * template), and the three alternations, not this number, guard against a slow moment.
 */
export async function baselineMs(run: ProbeRun, open: OpenPoint): Promise<number> {
  const again = await sendAt(run, open, open.value);
  const third = await sendAt(run, open, open.value);
  const durations = [open.exchange.durationMs, again?.exchange.durationMs, third?.exchange.durationMs]
    .filter((duration): duration is number => duration !== undefined)
    .sort((left, right) => left - right);
  return durations[Math.floor(durations.length / 2)] ?? open.exchange.durationMs;
}

/**
 * Alternates `sleep` (asks for one second) and `control` (asks for none) three times at the point; the proof
 * when every sleep is slow and every control quick, else undefined as soon as one is not.
 */
export async function sleepAlternation(
  run: ProbeRun,
  open: OpenPoint,
  base: number,
  payloads: { sleep: unknown; control: unknown },
  labels: { sleep: string; control: string } = { sleep: "sleep-1s", control: "sleep-0s" },
): Promise<TimedProof | undefined> {
  return inTimingLane(run.context, async () => {
    const evidence: TimedShot[] = [];
    const sleptMs: number[] = [];
    const controlMs: number[] = [];
    const suffixes = ["", "-again", "-third"];
    for (const suffix of suffixes) {
      const slow = await withIntendedDelay(SLEEP_MS, () => sendAt(run, open, payloads.sleep));
      if (!slow?.exchange.response || slow.exchange.durationMs < base + SLEPT_OVER_BASELINE_MS)
        return undefined;
      const quick = await sendAt(run, open, payloads.control);
      if (!quick?.exchange.response || quick.exchange.durationMs >= base + CONTROL_OVER_BASELINE_MS)
        return undefined;
      evidence.push(
        { label: `${labels.sleep}${suffix}`, sent: slow },
        { label: `${labels.control}${suffix}`, sent: quick },
      );
      sleptMs.push(slow.exchange.durationMs);
      controlMs.push(quick.exchange.durationMs);
    }
    return { evidence, baselineMs: base, sleptMs, controlMs };
  });
}

/** The assertion bound for a replayed sleep: below what a slept answer took, above the ordinary answer. */
export function sleepAssertionMs(base: number): number {
  return base + SLEPT_OVER_BASELINE_MS - 100;
}

/** Runs `measure` when no other timed measurement of the run is running (one at a time, in order). */
export async function inTimingLane<T>(context: RunContext, measure: () => Promise<T>): Promise<T> {
  const key = "injection:timing-lane";
  const previous = (context.shared.get(key) as Promise<unknown> | undefined) ?? Promise.resolve();
  let done = () => {};
  const mine = new Promise<void>((resolve) => {
    done = resolve;
  });
  context.shared.set(
    key,
    previous.then(() => mine),
  );
  await previous;
  try {
    return await measure();
  } finally {
    done();
  }
}
