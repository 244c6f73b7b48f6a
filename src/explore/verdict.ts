import { sortByContract } from "./finding-contract.ts";
import type { ExploreRunFile } from "./run-file.ts";
import { countStep } from "./step-codes.ts";

// The run's verdict. Only a valid issue fails a run: warnings do not, and neither does a finding that
// failed the contract. A run in which nothing could actually be exercised is "blocked", so a broken test
// setup is never mistaken for a product that works.

export type ExploreVerdict = "passed" | "failed" | "blocked";

export function verdictOf(run: ExploreRunFile): ExploreVerdict {
  const { valid } = sortByContract(run.findings);
  if (valid.some((finding) => finding.kind === "issue")) return "failed";
  // A step cut short by the budget exercised nothing; it neither ran nor was blocked.
  const ran = run.steps.filter((step) => countStep(step).kind !== "exhausted");
  if (ran.length === 0 || ran.every((step) => countStep(step).kind === "blocked")) return "blocked";
  return "passed";
}

/** The process exit code for a verdict: 0 passed, 1 failed, 3 blocked. */
export function exitCodeOf(verdict: ExploreVerdict): number {
  return verdict === "failed" ? 1 : verdict === "blocked" ? 3 : 0;
}
