import { othersStillAtWork } from "../../run/run-activity.ts";
import type { ToolContext } from "../../tools/context.ts";
import type { BrowsePace } from "./browse-pace.ts";

// When a browser pass must stop. Its own bound stretches while pages load slowly (browse-pace.ts); past
// it, the pass goes on while other agents of the run are still at work and nobody waits for a slot — the
// phase waits for them anyway, so the pages it opens then cost the run no time — up to a hard limit.

/** A pass goes on at most this many times its own bound while others work. */
const MAX_OVERTIME = 4;

export interface PassDeadline {
  /** When the pass must stop, as of now. */
  (): number;
  /** When it would have stopped on its own bound. */
  own(): number;
  /** How long it went on past its own bound because others were at work. */
  overtimeMs(): number;
}

export function passDeadline(
  context: Pick<ToolContext, "shared" | "agent">,
  pace: BrowsePace,
  started: number,
  boundMs: number,
): PassDeadline {
  const own = () => pace.deadline(started, boundMs);
  let extendedAt = 0;
  const deadline = () => {
    if (!othersStillAtWork(context.shared, context.agent.name)) return own();
    const limit = started + boundMs * MAX_OVERTIME;
    if (Date.now() > own()) extendedAt = Math.min(Date.now(), limit);
    return Math.max(own(), limit);
  };
  return Object.assign(deadline, { own, overtimeMs: () => Math.max(0, extendedAt - own()) });
}
