import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { simpleGit } from "simple-git";
import { z } from "zod";
import { ARTIFACT_URI } from "../../envelope/envelope.ts";
import { resolveTargetPath } from "../../guardrails/paths.ts";
import { resolveArtifactUri } from "../../store/artifacts.ts";
import type { ToolContext } from "../context.ts";
import { err, ok } from "../result.ts";
import { defineTool } from "../tool.ts";
import { openBranch, openWorkspace } from "../vcs/worktrees.ts";

// vcs: branches, files and commits in a worktree of the run, never in the person's checkout. Which branch,
// which paths, how much and whether force is judged by check() from the actions each call declares; this
// server only does what was allowed. Nothing here merges, and pushing needs the profile's consent.

const Branch = z.string().min(1).max(200);

const COMMITTER = ["user.name=qaas", "user.email=qaas@localhost"];

/** Files written on a branch in this run and not committed yet, relative to the target root. */
function pendingOf(context: ToolContext, branch: string): Set<string> {
  const key = `vcs:pending:${branch}`;
  let pending = context.shared.get(key) as Set<string> | undefined;
  if (!pending) {
    pending = new Set();
    context.shared.set(key, pending);
  }
  return pending;
}

/** Lines that differ between two versions, counted both ways (added plus removed), order ignored. */
export function changedLines(before: string, after: string): number {
  const counts = new Map<string, number>();
  for (const line of before.split("\n")) counts.set(line, (counts.get(line) ?? 0) + 1);
  let added = 0;
  for (const line of after.split("\n")) {
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    else added += 1;
  }
  let removed = 0;
  for (const left of counts.values()) removed += left;
  return added + removed;
}

/** The file as the branch has it now: written in its worktree, else committed on the branch, else empty. */
function currentText(context: ToolContext, branch: string, file: string): string {
  const workspace = openWorkspace(context, branch);
  const root = workspace?.root ?? context.target?.root;
  if (root === undefined) return "";
  const resolved = resolveTargetPath(root, file);
  if (!resolved.ok) return "";
  if (fs.existsSync(resolved.absolute)) return fs.readFileSync(resolved.absolute, "utf8");
  if (!workspace) return "";
  try {
    // The worktree holds only what was written; the rest of the branch is in git.
    return execFileSync("git", ["show", `HEAD:${path.posix.join(workspace.relative, resolved.relative)}`], {
      cwd: workspace.top,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return "";
  }
}

function contentOf(
  input: { content?: string | undefined; from_artifact?: string | undefined },
  context: ToolContext,
): string {
  if (input.content !== undefined) return input.content;
  // Only this run's artifacts: a stored test is copied as it was generated, byte for byte.
  if (!input.from_artifact?.startsWith(`artifact://${context.runId}/`)) {
    throw new Error(`from_artifact must be an artifact of this run (artifact://${context.runId}/…)`);
  }
  return fs.readFileSync(resolveArtifactUri(context.home, input.from_artifact), "utf8");
}

const createBranch = defineTool({
  name: "create_branch",
  server: "vcs",
  description:
    "Create a branch (or reopen one) in a worktree of this run, from `from` (default: the checkout's commit). Fix branches are named qaas/fix-<finding id>, reproductions qa/repro/<finding id>.",
  input: z.strictObject({ branch: Branch, from: z.string().min(1).optional() }),
  actions: (input) => [{ kind: "git_branch", branch: input.branch }],
  async run(input, context) {
    const workspace = await openBranch(context, input.branch, input.from);
    if (typeof workspace === "string") return err(workspace);
    return ok({ branch: workspace.branch, base: workspace.base });
  },
});

const writeFile = defineTool({
  name: "write_file",
  server: "vcs",
  description:
    "Write a whole file (path relative to the target root) on a branch opened with create_branch. Counts toward your diff budget; commit to keep it.",
  input: z
    .strictObject({
      branch: Branch,
      path: z.string().min(1),
      content: z.string().max(200_000).optional(),
      /** An artifact of this run to write instead of `content` (a stored generated test). */
      from_artifact: z.string().regex(ARTIFACT_URI).optional(),
    })
    .refine((input) => (input.content === undefined) !== (input.from_artifact === undefined), {
      message: "give exactly one of content or from_artifact",
    }),
  actions: (input, context) => [
    {
      kind: "write_file",
      path: input.path,
      changedLines: changedLines(currentText(context, input.branch, input.path), contentOf(input, context)),
    },
  ],
  async run(input, context) {
    const workspace = openWorkspace(context, input.branch);
    if (!workspace) return err(`no branch ${input.branch} is open in this run; call create_branch first`);
    const resolved = resolveTargetPath(workspace.root, input.path);
    if (!resolved.ok) return err(`cannot write ${input.path}: ${resolved.problem}`);
    const content = contentOf(input, context);
    fs.mkdirSync(path.dirname(resolved.absolute), { recursive: true });
    fs.writeFileSync(resolved.absolute, content);
    pendingOf(context, input.branch).add(resolved.relative);
    return ok({ branch: input.branch, path: resolved.relative, bytes: Buffer.byteLength(content) });
  },
});

const commit = defineTool({
  name: "commit",
  server: "vcs",
  description: "Commit every file written on the branch since its last commit, with a message saying why.",
  input: z.strictObject({ branch: Branch, message: z.string().min(1).max(2000) }),
  actions: (input, context) => [
    { kind: "git_commit", branch: input.branch, paths: [...pendingOf(context, input.branch)] },
  ],
  async run(input, context) {
    const workspace = openWorkspace(context, input.branch);
    if (!workspace) return err(`no branch ${input.branch} is open in this run; call create_branch first`);
    const pending = pendingOf(context, input.branch);
    if (pending.size === 0) return err(`nothing to commit on ${input.branch}: write_file first`);
    // The commit is signed as qaas whatever identity the person's git has (or lacks).
    const git = simpleGit({ baseDir: workspace.root, config: COMMITTER });
    const files = [...pending];
    await git.add(files);
    const result = await git.commit(input.message, files);
    pending.clear();
    const sha = (await git.revparse(["HEAD"])).trim();
    return ok({ branch: input.branch, commit: sha, files, summary: result.summary });
  },
});

const push = defineTool({
  name: "push",
  server: "vcs",
  description:
    "Push a branch to the profile's remote (never with force). Only when the target profile allows pushing.",
  input: z.strictObject({ branch: Branch, force: z.boolean().optional() }),
  actions: (input) => [{ kind: "git_push", branch: input.branch, force: input.force === true }],
  async run(input, context) {
    const vcs = context.target?.profile.vcs;
    if (!vcs?.allow_push) {
      return err(
        `push refused: the target profile does not allow pushing (set vcs.allow_push: true in ${context.target?.file ?? "the profile"}); the branch ${input.branch} stays local, where a person can read it`,
      );
    }
    const workspace = openWorkspace(context, input.branch);
    if (!workspace) return err(`no branch ${input.branch} is open in this run; call create_branch first`);
    await simpleGit(workspace.root).push(vcs.remote, input.branch);
    return ok({ branch: input.branch, remote: vcs.remote });
  },
});

const openPullRequest = defineTool({
  name: "open_pull_request",
  server: "vcs",
  description:
    "Open a DRAFT pull request from a pushed branch (needs a forge; none is configured in this version).",
  input: z.strictObject({
    branch: Branch,
    title: z.string().min(1).max(200),
    body: z.string().max(20_000),
    draft: z.boolean().default(true),
  }),
  actions: (input) => [{ kind: "pull_request", branch: input.branch, draft: input.draft }],
  async run(input) {
    return err(
      `open_pull_request is not available: no forge is configured for this target; the branch ${input.branch} holds the change for a person to open one`,
    );
  },
});

export const vcsTools = [createBranch, writeFile, commit, push, openPullRequest];
