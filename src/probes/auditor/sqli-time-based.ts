import type { Dbms } from "./sql-signatures.ts";
import type { QuoteChar, TimedContext } from "./sqli-payloads.ts";
import { sleepPayloads } from "./sqli-payloads.ts";
import type { SqliProof } from "./sqli-proof.ts";
import type { PointShots, Shot } from "./sqli-shots.ts";

// Time-based: a one-second database sleep delays the answer by a second, twice, while the same query with a
// zero-second sleep does not. Only for databases that have a sleep (PostgreSQL, MySQL); SQLite has none.

const SLOW_MS = 900;
const QUICK_MS = 400;

export async function timeBasedProof(
  shots: PointShots,
  dbms: Dbms | undefined,
  context: TimedContext,
  quote: QuoteChar,
  stats: { timed: number },
): Promise<SqliProof | undefined> {
  if (dbms === "sqlite" || dbms === "mssql" || dbms === "oracle") return undefined;
  const duration = (shot: Shot) => shot.exchange?.durationMs ?? 0;
  const baselineMs = duration(shots.baselineShot);
  for (const { dbms: kind, slow, control } of sleepPayloads(dbms, context, quote)) {
    stats.timed += 1;
    const first = await shots.send("sleep-1s", slow);
    if (!first.exchange?.response || duration(first) < baselineMs + SLOW_MS) continue;
    const quick = await shots.send("sleep-0s", control);
    if (!quick.exchange?.response || duration(quick) >= baselineMs + QUICK_MS) continue;
    const second = await shots.send("sleep-1s-again", slow);
    if (!second.exchange?.response || duration(second) < baselineMs + SLOW_MS) continue;
    return {
      technique: "time-based",
      context:
        context === "string"
          ? `string (${quote})`
          : context === "numeric"
            ? "numeric"
            : "sort key (ORDER BY)",
      dbms: kind,
      evidence: [first, quick, second],
      detail: `a 1-second SQL sleep delayed the answer by ${duration(first) - baselineMs} ms (and ${duration(second) - baselineMs} ms again) while a 0-second one did not (${duration(quick)} ms)`,
      assertions: [
        {
          kind: "duration_below",
          step: first.label,
          ms: baselineMs + SLOW_MS - 100,
          message: "an SQL sleep in the input must not delay the answer",
        },
      ],
    };
  }
  return undefined;
}
