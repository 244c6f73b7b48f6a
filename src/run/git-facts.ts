import { simpleGit } from "simple-git";

export interface GitFacts {
  commit: string | null;
  branch: string | null;
  dirty: boolean | null;
}

/** The target's commit, branch and whether its work tree has changes; nulls when it is not a git repo. */
export async function gitFacts(root: string | undefined): Promise<GitFacts> {
  if (!root) return { commit: null, branch: null, dirty: null };
  try {
    const git = simpleGit({ baseDir: root });
    if (!(await git.checkIsRepo())) return { commit: null, branch: null, dirty: null };
    const [commit, branch, status] = await Promise.all([
      git.revparse(["HEAD"]).catch(() => null),
      git.revparse(["--abbrev-ref", "HEAD"]).catch(() => null),
      git.status(),
    ]);
    return { commit, branch, dirty: !status.isClean() };
  } catch {
    return { commit: null, branch: null, dirty: null };
  }
}
