// How a step that did not pass counts. A step that could not run (no account, target down, a locator that
// matched nothing) is a fact about the test setup, not about the product: it must never be reported as the
// product being wrong. Only an assertion that ran and disagreed is a product failure.

export const STEP_CODES = [
  "ASSERTION_FAILED",
  "ASSERTION_INCONCLUSIVE",
  "CREDENTIAL_MISSING",
  "ENVIRONMENT_UNAVAILABLE",
  "SEED_DATA_MISSING",
  "LOCATOR_NOT_FOUND",
  "LOCATOR_AMBIGUOUS",
  "REPLAY_DIVERGED",
  "BUDGET_EXCEEDED",
] as const;

export type StepCode = (typeof STEP_CODES)[number];

export type BlockedCause = "credentials" | "environment" | "seed-data" | "automation" | "unknown";

export type StepCount =
  | { kind: "passed" }
  | { kind: "product-failure" }
  | { kind: "blocked"; cause: BlockedCause }
  | { kind: "exhausted" };

const BLOCKED_BY: Readonly<Record<string, BlockedCause>> = {
  CREDENTIAL_MISSING: "credentials",
  ENVIRONMENT_UNAVAILABLE: "environment",
  SEED_DATA_MISSING: "seed-data",
  LOCATOR_NOT_FOUND: "automation",
  LOCATOR_AMBIGUOUS: "automation",
  REPLAY_DIVERGED: "automation",
};

/**
 * The category of a step from its status and code. The code decides, not the status: a "failed" step with
 * a locator code is still blocked, and a failed step with no code (or one this table does not know) is
 * blocked for an unknown cause rather than silently becoming a product failure.
 */
export function countStep(step: { status: string; code?: string }): StepCount {
  if (step.status === "passed") return { kind: "passed" };
  const code = step.code;
  if (code === "ASSERTION_FAILED" || code === "ASSERTION_INCONCLUSIVE") return { kind: "product-failure" };
  if (code === "BUDGET_EXCEEDED" || (step.status === "exhausted" && code === undefined))
    return { kind: "exhausted" };
  const cause = code === undefined ? undefined : BLOCKED_BY[code];
  return { kind: "blocked", cause: cause ?? "unknown" };
}

/** Whether a step counts as blocked (for the stuck rule and the verdict). */
export function isBlockedStep(step: { status: string; code?: string }): boolean {
  return countStep(step).kind === "blocked";
}
