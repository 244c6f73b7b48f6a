import type { ExploreRunFile, StopReason } from "./run-file.ts";
import { isBlockedStep } from "./step-codes.ts";

// The check made before every new step. Only a spent budget or a run that is stuck ends it: a failed step
// is the product being wrong, which is exactly what the run is for, so it never stops the run on its own.

export type StopDecision = { stop: false } | { stop: true; reason: StopReason; detail: string };

/** How many blocked steps in a row, with no finding among them, mean the setup (not the app) is in the way. */
export const STUCK_AFTER = 3;

export function shouldStop(run: ExploreRunFile, elapsedMinutes: number): StopDecision {
  const { budget, usage } = run;
  if (run.steps.length >= budget.steps) {
    return { stop: true, reason: "step-limit", detail: `${run.steps.length} of ${budget.steps} steps used` };
  }
  if (elapsedMinutes >= budget.minutes) {
    return {
      stop: true,
      reason: "time",
      detail: `${elapsedMinutes.toFixed(1)} of ${budget.minutes} minutes used`,
    };
  }
  if (usage.tokens >= budget.tokens) {
    return { stop: true, reason: "tokens", detail: `${usage.tokens} of ${budget.tokens} tokens used` };
  }
  if (isStuck(run)) {
    return {
      stop: true,
      reason: "stuck",
      detail: `the last ${STUCK_AFTER} steps were blocked and reported no finding`,
    };
  }
  return { stop: false };
}

/** The last three steps were all blocked and none of them reported a finding. */
export function isStuck(run: ExploreRunFile): boolean {
  if (run.steps.length < STUCK_AFTER) return false;
  const last = run.steps.slice(-STUCK_AFTER);
  if (!last.every(isBlockedStep)) return false;
  const indexes = new Set(last.map((step) => step.index));
  return !run.findings.some((finding) => indexes.has(finding.step));
}
