import type { PlaybookSession } from "../playbook.ts";

// The test runs the VERIFIER and the REVIEWER share: the finding's test on the running target (the
// checkout's, or a branch's swapped in and the checkout's brought back), and the target's own suite on a
// branch compared with the checkout's. Both agents judge by these runs, never by reading prose.

export interface Series {
  command: string;
  times: number;
  failed: number;
  passed: number;
  /** Every failure was one of the test's own assertions (not a set-up, sign-in or connection failure). */
  own_assertion: boolean;
  reasons: string[];
  runs: Array<{ output_artifact: string; failure?: string }>;
}

export interface Suite {
  passed: boolean;
  total: number;
  failed: Array<{ name: string; message?: string }>;
  timed_out: boolean;
  output_artifact: string;
}

export type Outcome<Data> = { ok: true; data: Data } | { ok: false; error: string };

/** Runs the finding's test `times` times on the target as it runs now (the checkout's). */
export async function testOnCheckout(
  session: PlaybookSession,
  findingId: string,
  times: number,
): Promise<Outcome<Series>> {
  const series = await session.call<Series>("run_n_times", { finding_id: findingId, times });
  return series.ok ? { ok: true, data: series.data } : { ok: false, error: series.error };
}

/**
 * Runs the finding's test `times` times against the target started from `branch`, then brings the
 * checkout's target back whatever happened, so the next agent finds the target it expects.
 */
export async function testOnBranch(
  session: PlaybookSession,
  findingId: string,
  branch: string,
  times: number,
): Promise<Outcome<Series> & { startFailed?: boolean }> {
  const started = await session.call("spin_up", { branch });
  try {
    if (!started.ok)
      return { ok: false, error: started.error, startFailed: /did not start/.test(started.error) };
    return await testOnCheckout(session, findingId, times);
  } finally {
    const restored = await session.call("tear_down", {});
    if (!restored.ok) session.log(`tear_down: ${restored.error}`);
  }
}

export interface SuiteComparison {
  /** Cases that pass on the checkout and fail on the branch. */
  newFailures: string[];
  /** Cases the checkout runs that the branch no longer does (a deleted or skipped test hides a failure). */
  missing: number;
  branch: Suite;
  checkout: Suite;
}

/** The suite on `branch` against the checkout's; a string when either could not run or ran nothing. */
export async function compareSuites(
  session: PlaybookSession,
  branch: string,
): Promise<SuiteComparison | string> {
  const onBranch = await session.call<Suite>("run_suite", { branch });
  if (!onBranch.ok) return onBranch.error;
  const onCheckout = await session.call<Suite>("run_suite", {});
  if (!onCheckout.ok) return onCheckout.error;
  // Zero cases is not a green suite: the command failed before it ran anything, and says nothing.
  for (const [where, suite] of [
    [branch, onBranch.data],
    ["the checkout", onCheckout.data],
  ] as const) {
    if (suite.total === 0) {
      return `the suite ran no test case on ${where}${suite.timed_out ? " (timed out)" : ""}; see ${suite.output_artifact}`;
    }
  }
  const before = new Set(onCheckout.data.failed.map((entry) => entry.name));
  const newFailures = onBranch.data.failed.map((entry) => entry.name).filter((name) => !before.has(name));
  if (onBranch.data.timed_out && !onCheckout.data.timed_out) newFailures.push("(the suite timed out)");
  return {
    newFailures,
    missing: Math.max(0, onCheckout.data.total - onBranch.data.total),
    branch: onBranch.data,
    checkout: onCheckout.data,
  };
}

export function short(names: string[], limit = 5): string {
  return names.length <= limit
    ? names.join("; ")
    : `${names.slice(0, limit).join("; ")} and ${names.length - limit} more`;
}

/** run_suite's answer when the profile names no suite: nothing to compare, which is not a failure. */
export function noSuite(error: string): boolean {
  return /names no tests\.command/.test(error);
}
