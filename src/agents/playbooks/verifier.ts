import { definePlaybook, type PlaybookSession } from "../playbook.ts";
import { compareSuites, noSuite, type Series, short, testOnBranch, testOnCheckout } from "./verify-steps.ts";

// VERIFIER without a model: re-run the finding's failing test on the fixer's branch (the branch the
// router read from the fixer's ledger entries, never the repro branch), against the target started from
// that branch, then the target's own suite on the branch against the checkout's. Every run must pass for
// VERIFIED; a test still failing, even once, is NOT_FIXED; a passing test with new suite failures is
// REGRESSED. Before any fix exists (no branch yet) the test runs on the checkout: that is what reopens the
// ticket for the fixer.

const RUNS = 3;
/** What record_verdict is told the test ran on when no fix branch exists yet. */
const CHECKOUT = "HEAD";

export default definePlaybook(async (session) => {
  const ticket = String(session.task.ticket ?? "");
  const findingId = typeof session.task.finding_id === "string" ? session.task.finding_id : undefined;
  const branch = typeof session.task.branch === "string" ? session.task.branch : undefined;
  if (!findingId) {
    // Without the finding there is no test to judge by; no verdict sends the ticket to a person.
    session.log(`${ticket}: no finding is linked to this ticket, so there is no failing test to re-run`);
    return;
  }
  if (branch === undefined) {
    const series = await testOnCheckout(session, findingId, RUNS);
    if (!series.ok) {
      session.log(`${ticket}: the test could not run on the checkout: ${series.error}`);
      return;
    }
    const fixed = series.data.failed === 0;
    await verdict(session, ticket, fixed ? "VERIFIED" : "NOT_FIXED", CHECKOUT, series.data);
    return;
  }

  const series = await testOnBranch(session, findingId, branch, RUNS);
  if (!series.ok) {
    if (series.startFailed) {
      // The fixed code does not even start: whatever the test says, the fix broke the application.
      session.log(`${ticket}: the target does not start from ${branch}: ${series.error}`);
      await record(session, ticket, "REGRESSED", branch, { command: "spin_up", passed: false });
    } else {
      session.log(`${ticket}: the test could not run on ${branch}: ${series.error}`);
    }
    return;
  }
  if (series.data.failed > 0) {
    session.log(
      `${ticket}: still failing on ${branch} (${series.data.failed} of ${series.data.times}): ${short(series.data.reasons)}`,
    );
    await verdict(session, ticket, "NOT_FIXED", branch, series.data);
    return;
  }
  const suites = await compareSuites(session, branch);
  if (typeof suites === "string") {
    if (!noSuite(suites)) {
      // A suite that exists but could not be run cannot clear the fix; no verdict sends it to a person.
      session.log(`${ticket}: the test passes on ${branch}, but the suite could not judge it: ${suites}`);
      return;
    }
    session.log(`${ticket}: the target has no suite; judged by the finding's test alone`);
    await verdict(session, ticket, "VERIFIED", branch, series.data);
    return;
  }
  if (suites.newFailures.length > 0 || suites.missing > 0) {
    const what = [
      ...(suites.newFailures.length > 0 ? [`new suite failures: ${short(suites.newFailures)}`] : []),
      ...(suites.missing > 0 ? [`${suites.missing} suite case(s) no longer run`] : []),
    ].join("; ");
    session.log(`${ticket}: the test passes on ${branch}, but ${what}`);
    await record(session, ticket, "REGRESSED", branch, {
      command: "run_suite",
      passed: false,
      output_artifact: suites.branch.output_artifact,
    });
    return;
  }
  session.log(
    `${ticket}: verified on ${branch}: the test passed ${series.data.times} of ${series.data.times} runs and the suite has no new failure (${suites.branch.total} case(s))`,
  );
  await verdict(session, ticket, "VERIFIED", branch, series.data);
});

function verdict(
  session: PlaybookSession,
  ticket: string,
  value: "VERIFIED" | "NOT_FIXED",
  branch: string,
  series: Series,
) {
  const artifact = series.runs.find((run) => run.failure)?.output_artifact ?? series.runs[0]?.output_artifact;
  return record(session, ticket, value, branch, {
    command: series.command,
    passed: series.failed === 0,
    ...(artifact ? { output_artifact: artifact } : {}),
  });
}

async function record(
  session: PlaybookSession,
  ticket: string,
  value: "VERIFIED" | "NOT_FIXED" | "REGRESSED",
  branch: string,
  testRun: { command: string; passed: boolean; output_artifact?: string },
) {
  const recorded = await session.call("record_verdict", {
    ticket,
    verdict: value,
    branch,
    test_run: testRun,
  });
  if (!recorded.ok) session.log(`record_verdict: ${recorded.error}`);
}
