import { withIntendedDelay } from "../http/slow-operations.ts";
import type { Dbms } from "./sql-signatures.ts";
import type { QuoteChar, TimedContext } from "./sqli-payloads.ts";
import { sleepPayloads } from "./sqli-payloads.ts";
import type { SqliProof } from "./sqli-proof.ts";
import type { PointShots, Shot } from "./sqli-shots.ts";

/** The sleep each payload asks the database for; the pacing does not count it as slowness. */
const SLEEP_MS = 1000;

// Time-based: a one-second database sleep delays the answer by a second, twice, while the same query with a
// zero-second sleep does not. Only for databases that have a sleep (PostgreSQL, MySQL); SQLite has none.

// A 1-second sleep must add at least 900 ms to the fastest ordinary answer and 500 ms to the slowest (the
// baseline's measured jitter), and the 0-second control must come back 600 ms faster than either sleep.
const SLEPT_OVER_FASTEST_MS = 900;
const SLEPT_OVER_SLOWEST_MS = 500;
const CONTROL_MARGIN_MS = 600;

export async function timeBasedProof(
  shots: PointShots,
  dbms: Dbms | undefined,
  context: TimedContext,
  quote: QuoteChar,
  stats: { timed: number },
): Promise<SqliProof | undefined> {
  if (dbms === "sqlite" || dbms === "mssql" || dbms === "oracle") return undefined;
  const duration = (shot: Shot) => shot.exchange?.durationMs ?? 0;
  const slept = (shot: Shot) =>
    shot.exchange?.response !== undefined &&
    duration(shot) >= shots.ordinary.fastestMs + SLEPT_OVER_FASTEST_MS &&
    duration(shot) >= shots.ordinary.slowestMs + SLEPT_OVER_SLOWEST_MS;
  for (const { dbms: kind, slow, control } of sleepPayloads(dbms, context, quote)) {
    stats.timed += 1;
    const first = await withIntendedDelay(SLEEP_MS, () => shots.send("sleep-1s", slow));
    if (!slept(first)) continue;
    // Slow and quick alternate twice, every sleep well above every control: a load spike that happens
    // to hit the sleeps and spare the controls four times in a row is not a likely coincidence.
    const quick = await shots.send("sleep-0s", control);
    if (!quick.exchange?.response || duration(quick) > duration(first) - CONTROL_MARGIN_MS) continue;
    const second = await withIntendedDelay(SLEEP_MS, () => shots.send("sleep-1s-again", slow));
    if (!slept(second) || duration(quick) > duration(second) - CONTROL_MARGIN_MS) continue;
    const quickAgain = await shots.send("sleep-0s-again", control);
    const ceiling = Math.min(duration(first), duration(second)) - CONTROL_MARGIN_MS;
    if (!quickAgain.exchange?.response || duration(quickAgain) > ceiling) continue;
    const baselineMs = shots.ordinary.slowestMs;
    return {
      technique: "time-based",
      context:
        context === "string"
          ? `string (${quote})`
          : context === "numeric"
            ? "numeric"
            : "sort key (ORDER BY)",
      dbms: kind,
      evidence: [first, quick, second, quickAgain],
      detail: `a 1-second SQL sleep delayed the answer by ${duration(first) - baselineMs} ms (and ${duration(second) - baselineMs} ms again) while a 0-second one did not (${duration(quick)} ms)`,
      assertions: [
        {
          kind: "duration_below",
          step: first.label,
          ms: shots.ordinary.fastestMs + SLEPT_OVER_FASTEST_MS - 100,
          message: "an SQL sleep in the input must not delay the answer",
        },
      ],
    };
  }
  return undefined;
}
