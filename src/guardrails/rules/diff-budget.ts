import path from "node:path";
import type { LoadedTarget } from "../../tools/context.ts";
import { resolveTargetPath } from "../paths.ts";
import type { Denial, GuardScope } from "./scope.ts";
import { deny, quote } from "./scope.ts";

// diff-budget: a writer changes at most `files` distinct files and `lines` changed lines in one
// invocation. Writing a file it already changed again adds lines, not a file. No budget: unlimited.

/** The key a written file is counted under: its real path relative to the root, so spellings agree. */
export function changedFileKey(candidate: string, target: LoadedTarget | undefined): string {
  if (target?.root !== undefined) {
    const resolved = resolveTargetPath(target.root, candidate);
    if (resolved.ok) return resolved.relative;
  }
  return path.posix.normalize(candidate);
}

export function judgeDiffBudget(
  candidate: string,
  changedLines: number,
  scope: GuardScope,
): Denial | undefined {
  const { agent, guard } = scope;
  const budget = agent.policy.diff_budget;
  if (budget === undefined) return undefined;
  if (typeof changedLines !== "number" || !Number.isFinite(changedLines) || changedLines < 0) {
    return deny(
      "diff-budget",
      `${agent.name} may not write ${quote(String(candidate))}: the tool did not say how many lines it changes (${String(changedLines)}), so the diff budget cannot be kept. Report this as a tool fault.`,
    );
  }
  const key = changedFileKey(candidate, scope.target);
  const files = new Set(guard.filesChanged.keys()).add(key);
  if (files.size > budget.files) {
    const already = [...guard.filesChanged.keys()].join(", ") || "none";
    return deny(
      "diff-budget",
      `${agent.name} may not write ${quote(key)}: that would change ${files.size} distinct files, over its budget of ${budget.files} (already changed: ${already}). Keep the change to the files already touched, or report that the fix needs a larger change.`,
    );
  }
  let lines = changedLines;
  for (const counted of guard.filesChanged.values()) lines += counted;
  if (lines > budget.lines) {
    return deny(
      "diff-budget",
      `${agent.name} may not write ${quote(key)}: that would bring the changed lines to ${lines}, over its budget of ${budget.lines}. Make a smaller change, or report that the fix needs a larger one.`,
    );
  }
  return undefined;
}
