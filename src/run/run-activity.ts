import type { RunState } from "../router/run-state.ts";

// What the run is doing now, as the executor last saw it: which agents are running and how many
// invocations wait for a slot. A pass whose work has no natural end (pages to open) reads it to keep going
// while the phase would wait for other agents anyway, and to stop when it would hold anyone up.

export const RUN_ACTIVITY_KEY = "run-activity";

export interface RunActivity {
  /** Agents of the running invocations, one entry per invocation. */
  running: string[];
  /** Invocations waiting for a slot. */
  queued: number;
}

export function activityOf(state: RunState): RunActivity {
  return {
    running: Object.values(state.running).map((invocation) => invocation.agent),
    queued: state.queue.length,
  };
}

/**
 * Whether `agent` may go on past its own time bound without making the run longer: another agent is still
 * at work and nobody waits for a slot. Unknown (no executor, agents on remote workers) is no.
 */
export function othersStillAtWork(shared: Map<string, unknown>, agent: string): boolean {
  const activity = shared.get(RUN_ACTIVITY_KEY) as RunActivity | undefined;
  if (!activity || activity.queued > 0) return false;
  return activity.running.some((running) => running !== agent);
}
