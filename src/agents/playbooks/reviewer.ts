import type { BranchDiff } from "../../tools/vcs/branch-diff.ts";
import { definePlaybook, type PlaybookSession } from "../playbook.ts";
import { compareSuites, noSuite, short, testOnBranch, testOnCheckout } from "./verify-steps.ts";

// REVIEWER without a model: the deterministic gate a fix passes before anyone re-verifies it. The diff is
// re-read from git (not from what the fixer said it wrote) and judged by the fixer's own guardrails — a
// forbidden path class stops at a person; the immutable test, the diff budget, files outside the finding's
// area or outside the target send it back. Then the proof: the finding's test fails on the checkout and
// passes against the branch, and the target's suite has no new failure and runs no fewer cases. Static
// checks come first: a change that fails one is sent back without spending test runs on it.

interface Check {
  name: string;
  passed: boolean;
  detail: string;
  /** The check could not be made (the environment failed, not the fix): a person decides, not the fixer. */
  unjudged?: boolean;
}

type Decision = "APPROVE" | "REQUEST_CHANGES" | "ESCALATE";

export default definePlaybook(async (session) => {
  const ticket = String(session.task.ticket ?? "");
  const findingId = typeof session.task.finding_id === "string" ? session.task.finding_id : undefined;
  const branch = typeof session.task.branch === "string" ? session.task.branch : undefined;
  if (!branch) {
    await review(session, ticket, "ESCALATE", "(none)", [
      { name: "branch", passed: false, detail: "no fix branch was recorded for this ticket" },
    ]);
    return;
  }
  const diff = await session.call<BranchDiff>("branch_diff", {
    branch,
    ...(findingId ? { finding_id: findingId } : {}),
  });
  if (!diff.ok) {
    await review(session, ticket, "ESCALATE", branch, [
      { name: "diff", passed: false, detail: `the branch cannot be read: ${diff.error}` },
    ]);
    return;
  }
  const checks = staticChecks(diff.data, findingId !== undefined);
  if (diff.data.guardrails.some((found) => found.rule === "forbidden-path")) {
    // However small and however green, a change in a forbidden class is a person's decision.
    await review(session, ticket, "ESCALATE", branch, checks);
    return;
  }
  if (checks.some((check) => !check.passed)) {
    await review(session, ticket, "REQUEST_CHANGES", branch, checks);
    return;
  }
  if (!findingId) {
    // No test can prove this fix, and no new round of the fixer changes that.
    checks.push({
      name: "repro test",
      passed: false,
      detail: "no finding is linked, so no test proves the fix",
    });
    await review(session, ticket, "ESCALATE", branch, checks);
    return;
  }

  checks.push(await reproCheck(session, findingId, branch));
  checks.push(await suiteCheck(session, branch));
  const failed = checks.filter((check) => !check.passed);
  const decision =
    failed.length === 0
      ? "APPROVE"
      : failed.every((check) => check.unjudged)
        ? "ESCALATE"
        : "REQUEST_CHANGES";
  await review(session, ticket, decision, branch, checks);
});

/** The checks read from the diff alone: something changed, inside the target, within the guardrails, in scope. */
export function staticChecks(diff: BranchDiff, hasFinding: boolean): Check[] {
  const checks: Check[] = [];
  checks.push({
    name: "changed",
    passed: diff.files.length > 0 || diff.outside.length > 0,
    detail:
      diff.files.length > 0
        ? `${diff.files.length} file(s), ${diff.lines} line(s): ${diff.files.map((file) => file.path).join(", ")}`
        : "the branch changes nothing against the checkout",
  });
  checks.push({
    name: "inside the target",
    passed: diff.outside.length === 0,
    detail:
      diff.outside.length === 0
        ? "every change is inside the target root"
        : `outside it: ${short(diff.outside)}`,
  });
  for (const rule of ["forbidden-path", "immutable-test", "diff-budget", "write-scope"]) {
    const broken = diff.guardrails.filter((found) => found.rule === rule);
    checks.push({
      name: rule,
      passed: broken.length === 0,
      detail:
        broken.length === 0
          ? `kept (judged with ${diff.policy_of}'s policy)`
          : broken.map((found) => found.reason).join(" "),
    });
  }
  if (hasFinding) {
    // The target's own tests may change with a fix (one that pinned the old behaviour); the suite check
    // below refuses a change that drops cases. Any other file must bear on the finding.
    const unrelated = diff.files.filter((file) => !file.test && file.related === undefined);
    checks.push({
      name: "scope",
      passed: unrelated.length === 0,
      detail:
        unrelated.length === 0
          ? diff.files
              .map((file) => `${file.path}: ${file.test ? "a test of the target" : file.related}`)
              .join("; ")
          : `unrelated to the finding's location: ${short(unrelated.map((file) => file.path))}`,
    });
  }
  return checks;
}

/** The finding's test must fail on the checkout (it proves the defect) and pass against the branch. */
async function reproCheck(session: PlaybookSession, findingId: string, branch: string): Promise<Check> {
  const before = await testOnCheckout(session, findingId, 1);
  if (!before.ok)
    return { name: "repro test", passed: false, detail: `did not run on the checkout: ${before.error}` };
  if (before.data.failed === 0) {
    return {
      name: "repro test",
      passed: false,
      detail: "passes on the checkout already: it does not prove this change fixed anything",
    };
  }
  if (!before.data.own_assertion) {
    // A test that broke in its set-up (the target down, a sign-in refused) shows nothing about the defect.
    return {
      name: "repro test",
      passed: false,
      unjudged: true,
      detail: `did not reach its own assertion on the checkout (${short(before.data.reasons)}), so it proves nothing here`,
    };
  }
  const after = await testOnBranch(session, findingId, branch, 1);
  if (!after.ok)
    return { name: "repro test", passed: false, detail: `did not run on ${branch}: ${after.error}` };
  return after.data.failed === 0
    ? {
        name: "repro test",
        passed: true,
        detail: `fails on the checkout (${short(before.data.reasons)}), passes on ${branch}`,
      }
    : { name: "repro test", passed: false, detail: `still fails on ${branch}: ${short(after.data.reasons)}` };
}

async function suiteCheck(session: PlaybookSession, branch: string): Promise<Check> {
  const suites = await compareSuites(session, branch);
  if (typeof suites === "string") {
    // No suite at all is a gap of the target, not of the fix; a suite that cannot run needs a person.
    return noSuite(suites)
      ? { name: "suite", passed: true, detail: `none: ${suites}` }
      : { name: "suite", passed: false, unjudged: true, detail: `could not run: ${suites}` };
  }
  const problems = [
    ...(suites.newFailures.length > 0 ? [`new failures on ${branch}: ${short(suites.newFailures)}`] : []),
    ...(suites.missing > 0 ? [`${suites.missing} case(s) the checkout runs no longer run`] : []),
  ];
  return problems.length === 0
    ? {
        name: "suite",
        passed: true,
        detail: `${suites.branch.total} case(s), no new failure (${suites.checkout.failed.length} already failing on the checkout)`,
      }
    : { name: "suite", passed: false, detail: problems.join("; ") };
}

async function review(
  session: PlaybookSession,
  ticket: string,
  decision: Decision,
  branch: string,
  checks: Check[],
) {
  const failed = checks.filter((check) => !check.passed);
  const rationale =
    decision === "APPROVE"
      ? `every check passed: ${checks.map((check) => check.name).join(", ")}`
      : failed.map((check) => `${check.name}: ${check.detail}`).join(" | ");
  session.log(`${ticket}: ${decision} ${branch} — ${rationale}`);
  const recorded = await session.call("record_review", {
    ticket,
    decision,
    branch,
    rationale: rationale.slice(0, 4000),
    checks: checks.map(({ name, passed, detail }) => ({ name, passed, detail: detail.slice(0, 2000) })),
  });
  if (!recorded.ok) session.log(`record_review: ${recorded.error}`);
}
