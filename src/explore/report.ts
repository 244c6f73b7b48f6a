import { sortByContract } from "./finding-contract.ts";
import type { ExploreFinding, ExploreRunFile, ExploreStep } from "./run-file.ts";
import { type BlockedCause, countStep } from "./step-codes.ts";
import { verdictOf } from "./verdict.ts";

// The text report of an exploratory run. Blocked steps get their own section grouped by cause, so "the
// sign-in page is broken" (an issue) and "the run had no test account" (blocked: credentials) can never be
// read as the same line.

const CAUSE_ORDER: readonly BlockedCause[] = [
  "credentials",
  "environment",
  "seed-data",
  "automation",
  "unknown",
];

/** Issues before warnings, most severe first; ties keep the order they were reported in. */
export function rankFindings(findings: readonly ExploreFinding[]): ExploreFinding[] {
  return findings
    .map((finding, order) => ({ finding, order }))
    .sort(
      (a, b) =>
        Number(a.finding.kind === "warning") - Number(b.finding.kind === "warning") ||
        b.finding.severity - a.finding.severity ||
        a.order - b.order,
    )
    .map((entry) => entry.finding);
}

/** Blocked steps by cause, causes in a fixed order, empty causes left out. */
export function blockedByCause(
  steps: readonly ExploreStep[],
): Array<{ cause: BlockedCause; steps: ExploreStep[] }> {
  const groups = new Map<BlockedCause, ExploreStep[]>();
  for (const step of steps) {
    const counted = countStep(step);
    if (counted.kind !== "blocked") continue;
    groups.set(counted.cause, [...(groups.get(counted.cause) ?? []), step]);
  }
  return CAUSE_ORDER.filter((cause) => groups.has(cause)).map((cause) => ({
    cause,
    steps: groups.get(cause)!,
  }));
}

export function renderReport(run: ExploreRunFile): string {
  const verdict = verdictOf(run);
  const { valid, failedContract } = sortByContract(run.findings);
  const lines: string[] = [];
  lines.push(`verdict: ${verdict}`);
  lines.push(`goal: ${run.goal}`);
  lines.push(`persona: ${run.persona}`);
  lines.push(`ended: ${run.ended?.reason ?? "still running"}`);
  lines.push(
    `budget used: steps ${run.usage.steps}/${run.budget.steps}, minutes ${run.usage.minutes.toFixed(1)}/${run.budget.minutes}, tokens ${run.usage.tokens}/${run.budget.tokens}`,
  );
  for (const clamp of run.clamped) {
    lines.push(`  ${clamp.field}: asked ${clamp.asked}, clamped to ${clamp.used}`);
  }

  lines.push("", `findings (${valid.length}):`);
  if (valid.length === 0) lines.push("  none");
  for (const finding of rankFindings(valid)) {
    lines.push(
      `  [${finding.kind} sev ${finding.severity}] ${finding.title} (step ${finding.step}, ${finding.screen})`,
    );
    lines.push(`    expected: ${finding.expected}`);
    lines.push(`    observed: ${finding.observed}`);
    lines.push(`    repro: ${finding.repro.join(" → ")}`);
    lines.push(`    evidence: ${finding.evidence.map((item) => `${item.kind} ${item.path}`).join(", ")}`);
  }

  const blocked = blockedByCause(run.steps);
  if (blocked.length > 0) {
    lines.push("", "blocked steps (the test setup, not the product):");
    for (const group of blocked) {
      lines.push(`  ${group.cause}:`);
      for (const step of group.steps)
        lines.push(
          `    ${step.index}. ${step.title}${step.code ? ` [${step.code}]` : ""}${step.detail ? `: ${step.detail}` : ""}`,
        );
    }
  }

  if (failedContract.length > 0) {
    lines.push("", "findings that failed the contract (held out of the verdict):");
    for (const { finding, missing } of failedContract) {
      lines.push(`  ${finding.title || "(untitled)"}: missing or invalid ${missing.join(", ")}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
