import { afterAll, describe, it } from "vitest";
import type { Row } from "./fixture.ts";
import { createFixture, expectRow, FIXER, loadedTarget, RECKLESS, REPRODUCER, TRIAGE } from "./fixture.ts";

// Branch rules: each writer on its own branch patterns, protected branches out of reach whatever the
// patterns say, no force-push, no merge, drafts only.

const fixture = createFixture();
afterAll(() => fixture.cleanup());
const target = loadedTarget(fixture);

const ROWS: Row[] = [
  // branch-scope and protected-branch
  {
    name: "reproducer creates its branch",
    agent: REPRODUCER,
    action: { kind: "git_branch", branch: "qa/repro/login-500" },
    expected: "allowed",
  },
  {
    name: "reproducer creates a fix branch",
    agent: REPRODUCER,
    action: { kind: "git_branch", branch: "fix/login" },
    expected: "branch-scope",
  },
  {
    name: "`*` stays within one segment",
    agent: REPRODUCER,
    action: { kind: "git_branch", branch: "qa/repro/a/b" },
    expected: "branch-scope",
  },
  {
    name: "fixer creates its branch",
    agent: FIXER,
    action: { kind: "git_branch", branch: "refs/heads/fix/null-check" },
    expected: "allowed",
  },
  {
    name: "fixer creates main",
    agent: FIXER,
    action: { kind: "git_branch", branch: "main" },
    expected: "protected-branch",
  },
  {
    name: "a non-writer creates a branch",
    agent: TRIAGE,
    action: { kind: "git_branch", branch: "qa/repro/x" },
    expected: "branch-scope",
  },
  {
    name: "an invalid branch name",
    agent: FIXER,
    action: { kind: "git_branch", branch: "fix/a..b" },
    expected: "branch-scope",
  },
  {
    name: "patterns matching anything still spare master",
    agent: RECKLESS,
    action: { kind: "git_branch", branch: "master" },
    expected: "protected-branch",
  },
  {
    name: "patterns matching anything still spare release/*",
    agent: RECKLESS,
    action: { kind: "git_commit", branch: "release/2.0", paths: ["src/app.ts"] },
    expected: "protected-branch",
  },
  {
    name: "patterns matching anything still spare HEAD",
    agent: RECKLESS,
    action: { kind: "git_push", branch: "HEAD", force: false },
    expected: "protected-branch",
  },
  {
    name: "patterns matching anything still spare refs/heads/Main",
    agent: RECKLESS,
    action: { kind: "git_push", branch: "refs/heads/Main", force: false },
    expected: "protected-branch",
  },
  {
    name: "patterns matching anything still spare develop and trunk",
    agent: RECKLESS,
    action: { kind: "git_branch", branch: "trunk" },
    expected: "protected-branch",
  },
  {
    name: "patterns matching anything allow other branches",
    agent: RECKLESS,
    action: { kind: "git_branch", branch: "feature" },
    expected: "allowed",
  },
  {
    name: "fixer commits to main",
    agent: FIXER,
    action: { kind: "git_commit", branch: "main", paths: ["src/app.ts"] },
    expected: "protected-branch",
  },
  // force-push
  {
    name: "fixer pushes its branch",
    agent: FIXER,
    action: { kind: "git_push", branch: "fix/x", force: false },
    expected: "allowed",
  },
  {
    name: "fixer force-pushes its branch",
    agent: FIXER,
    action: { kind: "git_push", branch: "fix/x", force: true },
    expected: "force-push",
  },
  {
    name: "reproducer pushes to main",
    agent: REPRODUCER,
    action: { kind: "git_push", branch: "main", force: false },
    expected: "protected-branch",
  },
  // no-merge
  {
    name: "fixer merges its own branch",
    agent: FIXER,
    action: { kind: "git_merge", branch: "fix/x" },
    expected: "no-merge",
  },
  {
    name: "reckless agent merges anything",
    agent: RECKLESS,
    action: { kind: "git_merge", branch: "feature" },
    expected: "no-merge",
  },
  // draft-only
  {
    name: "fixer opens a draft",
    agent: FIXER,
    action: { kind: "pull_request", branch: "fix/x", draft: true },
    expected: "allowed",
  },
  {
    name: "fixer opens a ready pull request",
    agent: FIXER,
    action: { kind: "pull_request", branch: "fix/x", draft: false },
    expected: "draft-only",
  },
  {
    name: "a pull request from another agent's branch",
    agent: FIXER,
    action: { kind: "pull_request", branch: "qa/repro/x", draft: true },
    expected: "branch-scope",
  },
];

describe("git rules", () => {
  it.each(ROWS)("$name → $expected", (row) => expectRow(row, target));
});
