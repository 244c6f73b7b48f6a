import type { RejectReason } from "./candidates.ts";

// The one rule that confirms a bug-bash candidate: its repro test failed on every run, and every failure
// was the assertion that encodes the candidate. Anything else is a rejection with the reason a person
// needs: the test passed or wavered (did-not-reproduce), it failed on another of its own assertions (the
// explorer read something that is not this defect: artifact), or it never reached an assertion (the set-up,
// a session or the target itself was in the way: environment).

export interface TestRun {
  passed: boolean;
  /** The first failing case's message. */
  failure?: string;
  /** Whether that failure was an assertion the test states (not its set-up). */
  own_assertion: boolean;
  timed_out: boolean;
}

export type CandidateVerdict =
  | { status: "confirmed"; failedAt: string; note: string }
  | { status: "rejected"; reason: RejectReason; failedAt: string | null; note: string };

/** Whether a failure message is the encoding assertion (its own words, with any "(got …)" tail after them). */
export function failsOn(message: string | undefined, encodes: string): boolean {
  if (!message) return false;
  const first = message.split("\n")[0]!.trim();
  return first === encodes || first.startsWith(`${encodes} (`);
}

export function judgeCandidate(runs: readonly TestRun[], encodes: string): CandidateVerdict {
  const failed = runs.filter((run) => !run.passed);
  const firstFailure =
    failed
      .find((run) => run.failure)
      ?.failure?.split("\n")[0]
      ?.trim() ?? null;
  if (runs.length === 0) {
    return { status: "rejected", reason: "environment", failedAt: null, note: "the repro test did not run" };
  }
  if (failed.length === 0) {
    return {
      status: "rejected",
      reason: "did-not-reproduce",
      failedAt: null,
      note: `the repro test passed all ${runs.length} run(s): the defect did not show again`,
    };
  }
  if (failed.length < runs.length) {
    return {
      status: "rejected",
      reason: "did-not-reproduce",
      failedAt: firstFailure,
      note: `the repro test failed ${failed.length} of ${runs.length} runs: not a stable reproduction`,
    };
  }
  if (failed.every((run) => failsOn(run.failure, encodes))) {
    return {
      status: "confirmed",
      failedAt: encodes,
      note: `the repro test failed ${runs.length} of ${runs.length} runs on "${encodes}"`,
    };
  }
  const other = failed.find((run) => !failsOn(run.failure, encodes));
  if (other?.own_assertion) {
    return {
      status: "rejected",
      reason: "artifact",
      failedAt: firstFailure,
      note: `the repro test failed on another of its assertions, not on "${encodes}": what the explorer saw is not this defect`,
    };
  }
  return {
    status: "rejected",
    reason: "environment",
    failedAt: firstFailure,
    note: other?.timed_out
      ? "the repro test timed out before it reached its assertion"
      : `the repro test failed before it reached its assertion: ${firstFailure ?? "no message"}`,
  };
}
