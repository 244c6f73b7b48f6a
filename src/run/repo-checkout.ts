import fs from "node:fs";
import path from "node:path";
import { simpleGit } from "simple-git";
import { QaasError } from "../errors.ts";
import { initTarget } from "../init/init-target.ts";

// `qaas run --repo <path|git URL> [--ref R]`: the code under test is cloned into the run home, never
// used in place, so a run cannot touch a working copy someone is editing. The repository's own profile
// wins; without one, `qaas init`'s guess is written beside the clone (not into it) and used.

/** Where a repository may keep its profile, in the order they are looked for. */
export const REPO_PROFILE_FILES = ["qaas.yaml", "qaas.yml", ".qaas/profile.yaml", ".qaas/profile.yml"];

export interface RepoCheckout {
  /** The clone. */
  root: string;
  /** The profile to pass as `--target`. */
  profile: string;
  /** true when no profile was found and one was guessed. */
  guessed: boolean;
}

export async function checkoutRepo(options: {
  home: string;
  repo: string;
  ref?: string;
  configDir?: string;
}): Promise<RepoCheckout> {
  const local = path.resolve(options.repo);
  const source = fs.existsSync(local) ? local : options.repo;
  const slug = path
    .basename(source.replace(/\/+$/, ""))
    .replace(/\.git$/, "")
    .replace(/[^A-Za-z0-9_-]/g, "-");
  const workspace = fs.mkdtempSync(path.join(prepare(options.home), `${slug || "repo"}-`));
  const root = path.join(workspace, "checkout");
  try {
    await simpleGit().clone(source, root);
    if (options.ref) await simpleGit(root).checkout(options.ref);
  } catch (error) {
    throw new QaasError(
      "REPO_CLONE_FAILED",
      `--repo ${options.repo}${options.ref ? ` --ref ${options.ref}` : ""}: cannot clone into ${root}: ` +
        `${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const found = REPO_PROFILE_FILES.map((name) => path.join(root, name)).find((file) => fs.existsSync(file));
  if (found) return { root, profile: found, guessed: false };
  const init = await initTarget({
    dir: root,
    // The file's name becomes the profile's name: the repository's, so runs of it are told apart.
    out: path.join(workspace, `${(slug || "repo").toLowerCase()}.yaml`),
    force: true,
    ...(options.configDir ? { configDir: options.configDir } : {}),
  });
  return { root, profile: init.file, guessed: true };
}

function prepare(home: string): string {
  const folder = path.join(path.resolve(home), "workspaces");
  fs.mkdirSync(folder, { recursive: true });
  return folder;
}
