import fs from "node:fs";
import path from "node:path";
import { simpleGit } from "simple-git";
import type { RunContext } from "../context.ts";
import { onRunEnd } from "../run-end.ts";

// Agents change code only in git worktrees under the run's folder, one per branch: the person's checkout
// (its files, its current branch, its index) is never touched. Branches land in the same repository, so
// a person sees them with `git branch`; the worktrees themselves are removed when the run ends.

export interface BranchWorkspace {
  branch: string;
  /** The worktree's top folder. */
  top: string;
  /** The target's root inside the worktree (the target may live in a subfolder of its repository). */
  root: string;
  /** The target root relative to the worktree's top (`""` when the target is the whole repository). */
  relative: string;
  /** The commit the branch started from. */
  base: string;
  /** Whether the files are written out (see `checkOut`); the index always holds the branch. */
  checkedOut: boolean;
}

const WORKSPACES_KEY = "vcs:workspaces";

function workspacesOf(context: RunContext): Map<string, BranchWorkspace> {
  let workspaces = context.shared.get(WORKSPACES_KEY) as Map<string, BranchWorkspace> | undefined;
  if (!workspaces) {
    workspaces = new Map();
    context.shared.set(WORKSPACES_KEY, workspaces);
  }
  return workspaces;
}

/** The repository holding the target: its top folder and the target's place in it. */
export async function targetRepository(
  context: RunContext,
): Promise<{ top: string; relative: string } | string> {
  const root = context.target?.root;
  if (root === undefined) return "this target has no source root, so there is no repository to branch";
  try {
    const top = (await simpleGit(root).revparse(["--show-toplevel"])).trim();
    return { top, relative: path.relative(top, root) };
  } catch {
    return `the target's source root ${root} is not inside a git repository`;
  }
}

/** The worktree already open for `branch` in this run, if any. */
export function openWorkspace(context: RunContext, branch: string): BranchWorkspace | undefined {
  return workspacesOf(context).get(branch);
}

/**
 * Opens (or reopens) the worktree of `branch`: a new branch starts from `from` (default: the commit the
 * checkout is on); an existing branch, from an earlier run or agent, is checked out as it is.
 */
export async function openBranch(
  context: RunContext,
  branch: string,
  from?: string,
): Promise<BranchWorkspace | string> {
  const known = openWorkspace(context, branch);
  if (known) return known;
  const repository = await targetRepository(context);
  if (typeof repository === "string") return repository;
  const git = simpleGit(repository.top);
  const folder = path.join(
    context.home,
    "runs",
    context.runId,
    "worktrees",
    branch.replace(/[^\w.-]+/g, "_"),
  );
  fs.mkdirSync(path.dirname(folder), { recursive: true });
  const exists = (await git.branchLocal()).all.includes(branch);
  try {
    // Without checking the files out: committing a test or a small fix needs only the index (read from
    // the branch's tree), and a full checkout of a large repository costs seconds. `checkOut` writes the
    // files when something must run from them (the target, its suite).
    if (exists) {
      await git.raw(["worktree", "add", "--no-checkout", folder, branch]);
    } else {
      const start = (await git.revparse([from ?? "HEAD"])).trim();
      await git.raw(["worktree", "add", "--no-checkout", "-b", branch, folder, start]);
    }
    await simpleGit(folder).raw(["read-tree", "HEAD"]);
  } catch (error) {
    return `could not open a worktree for ${branch}: ${error instanceof Error ? error.message : String(error)}`;
  }
  const base = (await simpleGit(folder).revparse(["HEAD"])).trim();
  const workspace: BranchWorkspace = {
    branch,
    top: folder,
    root: path.join(folder, repository.relative),
    relative: repository.relative,
    base,
    checkedOut: false,
  };
  fs.mkdirSync(workspace.root, { recursive: true });
  const workspaces = workspacesOf(context);
  if (workspaces.size === 0) onRunEnd(context, () => closeWorkspaces(context, repository.top));
  workspaces.set(branch, workspace);
  return workspace;
}

/**
 * Writes the branch's files into its worktree, keeping any file already there (one written by an agent),
 * and links the checkout's installed dependencies, so the target and its tests can run from it.
 */
export async function checkOut(context: RunContext, workspace: BranchWorkspace): Promise<void> {
  if (workspace.checkedOut) return;
  // Without --force, files already present are left alone; git reports them and exits non-zero.
  await simpleGit(workspace.top)
    .raw(["checkout-index", "--all"])
    .catch(() => undefined);
  const repository = await targetRepository(context);
  if (typeof repository !== "string") linkDependencies(repository.top, workspace.top, workspace.relative);
  workspace.checkedOut = true;
}

/**
 * Installed dependencies are not in git, so a fresh worktree has none: the checkout's `node_modules`
 * (at the repository top and at the target root) are linked in, read-only in intent, so the target and its
 * tests start from the worktree exactly as they do from the checkout.
 */
function linkDependencies(top: string, worktree: string, relative: string): void {
  for (const folder of new Set(["", relative])) {
    const source = path.join(top, folder, "node_modules");
    const link = path.join(worktree, folder, "node_modules");
    if (fs.existsSync(source) && !fs.existsSync(link)) {
      try {
        fs.symlinkSync(fs.realpathSync(source), link, "dir");
      } catch {
        // A target that cannot start without it will say so when started.
      }
    }
  }
}

async function closeWorkspaces(context: RunContext, top: string): Promise<void> {
  const git = simpleGit(top);
  for (const workspace of workspacesOf(context).values()) {
    // The branch keeps every commit; only the scratch folder goes (uncommitted edits in it are discarded).
    await git.raw(["worktree", "remove", "--force", workspace.top]).catch(() => undefined);
  }
  await git.raw(["worktree", "prune"]).catch(() => undefined);
  workspacesOf(context).clear();
}
