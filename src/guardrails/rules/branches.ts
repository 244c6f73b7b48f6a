import picomatch from "picomatch/posix.js";
import type { Denial, GuardScope } from "./scope.ts";
import { deny, quote } from "./scope.ts";

// branch-scope and protected-branch: git writes happen only on the agent's own branch patterns, and the
// branches people integrate on are out of reach whatever an agent's patterns say.

const PROTECTED_NAMES = new Set(["main", "master", "trunk", "develop", "head"]);
const PROTECTED_LIST = "main, master, trunk, develop, release/* and HEAD";

/** The short branch name: `refs/heads/x` and `x` are the same branch. */
export function normalizeBranch(branch: string): string {
  return branch.trim().replace(/^refs\/heads\//, "");
}

/** Compared without case: on a case-insensitive file system `Main` and `main` are one ref. */
export function isProtectedBranch(branch: string): boolean {
  const name = normalizeBranch(branch).toLowerCase();
  return PROTECTED_NAMES.has(name) || name === "release" || name.startsWith("release/");
}

/** Why `branch` is not a name git accepts as a branch (git check-ref-format), or undefined. */
function invalidBranchName(branch: string): string | undefined {
  if (branch === "") return "it is empty";
  if (branch.startsWith("-")) return "it starts with `-`";
  const control = [...branch].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f);
  if (control || /[\s~^:?*[\\]/.test(branch))
    return "it contains a space, a control character or one of ~ ^ : ? * [ \\";
  if (branch.includes("..") || branch.includes("@{") || branch.includes("//")) {
    return "it contains `..`, `@{` or `//`";
  }
  if (branch.endsWith("/") || branch.endsWith(".") || branch.endsWith(".lock") || branch === "@") {
    return "it ends with `/`, `.` or `.lock`";
  }
  if (branch.split("/").some((segment) => segment.startsWith("."))) return "a segment starts with `.`";
  return undefined;
}

const matchers = new Map<string, picomatch.Matcher>();

function branchMatcher(pattern: string): picomatch.Matcher {
  let matcher = matchers.get(pattern);
  if (matcher === undefined) {
    // `*` stays within one segment: `fix/*` allows `fix/x`, not `fix/x/y`.
    matcher = picomatch(pattern, { dot: true });
    matchers.set(pattern, matcher);
  }
  return matcher;
}

/** protected-branch, then branch-scope, for an action that `verb`s (creates, commits to, pushes…) `branch`. */
export function judgeBranch(branch: string, verb: string, scope: GuardScope): Denial | undefined {
  const { agent } = scope;
  const patterns = agent.policy.branch_patterns.filter((pattern) => pattern.trim() !== "");
  const ownBranches =
    patterns.length > 0 ? `a branch matching ${patterns.join(" or ")}` : "no branch (its policy lists none)";
  if (typeof branch !== "string") {
    return deny("branch-scope", `${agent.name} may not ${verb} a branch without a name. Name the branch.`);
  }
  const name = normalizeBranch(branch);
  if (isProtectedBranch(name)) {
    return deny(
      "protected-branch",
      `${agent.name} may not ${verb} the branch ${quote(name)}: ${PROTECTED_LIST} are protected and only people change them, whatever an agent's branch patterns say. Use ${ownBranches} instead.`,
    );
  }
  const invalid = invalidBranchName(name);
  if (invalid !== undefined) {
    return deny(
      "branch-scope",
      `${agent.name} may not ${verb} the branch ${quote(name)}: it is not a valid branch name (${invalid}). Use ${ownBranches}.`,
    );
  }
  if (patterns.length === 0) {
    return deny(
      "branch-scope",
      `${agent.name} may not ${verb} the branch ${quote(name)}: its policy declares no branch_patterns, so it changes no branch. Report what you found instead of changing the repository.`,
    );
  }
  if (!patterns.some((pattern) => branchMatcher(pattern)(name))) {
    return deny(
      "branch-scope",
      `${agent.name} may not ${verb} the branch ${quote(name)}: it may only work on ${ownBranches}. Use such a branch instead (for example ${patterns[0]!.replace(/\*+/g, "short-name")}).`,
    );
  }
  return undefined;
}
