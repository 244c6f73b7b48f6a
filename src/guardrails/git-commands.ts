import type { ShellVerdict } from "./commands.ts";
import { isProtectedBranch, normalizeBranch } from "./rules/branches.ts";
import { shellWords } from "./shell-words.ts";

// The git and forge (gh, glab, hub) commands the shell may not run: merging in any form, rewriting
// history, force-pushing, pushing to or deleting protected branches, and leaving draft pull requests.

const NO_MERGE =
  "nothing in qaas merges — a change reaches another branch only when a person accepts a draft pull request";

const GIT_GLOBAL_WITH_VALUE = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
]);

/**
 * Judges one `git …` invocation. Global options (`-C dir`, `-c key=value`, `--git-dir=…`) are skipped to
 * find the subcommand, and an alias defined on the command line is expanded; `judgeNested` judges the
 * shell text of a `!` alias.
 */
export function judgeGit(
  argv: string[],
  dynamic: boolean[],
  judgeNested: (source: string) => ShellVerdict | undefined,
): ShellVerdict | undefined {
  const aliases = new Map<string, string | undefined>();
  let index = 1;
  while (index < argv.length && argv[index]!.startsWith("-")) {
    const option = argv[index]!;
    const value = argv[index + 1] ?? "";
    const setting = option.startsWith("--config-env=") ? option.slice("--config-env=".length) : value;
    const alias = /^alias\.([^=]+)(?:=(.*))?$/is.exec(setting);
    if (alias !== null && (option === "-c" || option.startsWith("--config-env"))) {
      // A --config-env alias takes its value from the environment: unknown here, so never trusted.
      aliases.set(alias[1]!.toLowerCase(), option === "-c" ? (alias[2] ?? "") : undefined);
    }
    index += GIT_GLOBAL_WITH_VALUE.has(option) ? 2 : 1;
  }
  const subcommand = argv[index];
  if (subcommand === undefined) return undefined;
  if (dynamic[index] === true) {
    return forbidden(`it runs a git command only known at run time (\`${subcommand}\`); write it literally`);
  }
  const rest = argv.slice(index + 1);
  if (aliases.has(subcommand.toLowerCase())) {
    const expansion = aliases.get(subcommand.toLowerCase());
    if (expansion === undefined) return forbidden(`it runs a git alias whose meaning is not known`);
    if (expansion.startsWith("!")) return judgeNested(`${expansion.slice(1)} ${rest.join(" ")}`);
    const expanded = ["git", ...shellWords(expansion), ...rest];
    return judgeGit(
      expanded,
      expanded.map(() => false),
      judgeNested,
    );
  }
  return judgeGitSubcommand(subcommand, rest);
}

function judgeGitSubcommand(subcommand: string, rest: string[]): ShellVerdict | undefined {
  const positionals = rest.filter((word) => !word.startsWith("-"));
  const protectedName = positionals.find((word) => isProtectedBranch(word));
  const firstProtected =
    positionals[0] !== undefined && isProtectedBranch(positionals[0]) ? positionals[0] : undefined;
  switch (subcommand) {
    case "merge":
      return forbidden(`it runs \`git merge\`; ${NO_MERGE}. Open a draft pull request instead`);
    case "pull":
      return forbidden(
        `it runs \`git pull\`, which merges or rebases another branch into this one, and ${NO_MERGE}. Use \`git fetch\` to read remote branches instead`,
      );
    case "rebase":
      return forbidden(
        "it runs `git rebase`, which rewrites history; add a new commit on your branch instead",
      );
    case "reset":
      return rest.includes("--hard")
        ? forbidden("it runs `git reset --hard`, which throws work away; restore single files instead")
        : undefined;
    case "push":
      return judgePush(rest);
    case "branch": {
      // Deleting, moving or copying touches every branch named; forcing (`-f b start`) only the first.
      const renames = rest.some(
        (word) => /^-[A-Za-z]*[dDmMcC]/.test(word) || /^--(delete|move|copy)$/.test(word),
      );
      const forces = rest.some((word) => /^-[A-Za-z]*f/.test(word) || word === "--force");
      const touched = renames ? protectedName : forces ? firstProtected : undefined;
      return touched === undefined ? undefined : protectedBranch(touched, "deletes, moves or resets");
    }
    case "checkout":
    case "switch": {
      const at = rest.findIndex((word) => word === "-B" || word === "-C" || word === "--force-create");
      const reset = at === -1 ? undefined : rest[at + 1];
      return reset !== undefined && isProtectedBranch(reset) ? protectedBranch(reset, "resets") : undefined;
    }
    case "update-ref":
      return firstProtected !== undefined
        ? protectedBranch(normalizeBranch(firstProtected), "moves")
        : undefined;
    case "config": {
      const reads = rest.some((word) => /^--(get|unset|list)|^-l$/.test(word));
      return !reads && positionals.some((word) => /^alias\./i.test(word))
        ? forbidden(
            "it defines a git alias, which would hide what later commands run; write commands out in full",
          )
        : undefined;
    }
    default:
      return undefined;
  }
}

const PUSH_WITH_VALUE = new Set(["-o", "--push-option", "--repo", "--receive-pack", "--exec"]);

function judgePush(rest: string[]): ShellVerdict | undefined {
  const positionals: string[] = [];
  for (let index = 0; index < rest.length; index += 1) {
    const word = rest[index]!;
    if (word === "--") positionals.push(...rest.slice(index + 1));
    if (word === "--") break;
    if (/^--force(-with-lease|-if-includes)?(=.*)?$/.test(word) || /^-[A-Za-z]*f/.test(word)) {
      return forbidden(
        "it force-pushes, which rewrites history others may already have read; push a new commit without force instead",
      );
    }
    if (word === "--mirror" || word === "--all" || word === "--branches") {
      return forbidden(
        `it pushes every branch (\`${word}\`), protected ones among them; push only your own branch`,
      );
    }
    if (PUSH_WITH_VALUE.has(word)) index += 1;
    else if (!word.startsWith("-")) positionals.push(word);
  }
  for (const refspec of positionals) {
    // A bare `HEAD` pushes the current branch under its own name, which the branch tools already scoped.
    if (refspec === "HEAD") continue;
    if (refspec.startsWith("+")) {
      return forbidden(`it force-pushes (\`${refspec}\`); push a new commit without force instead`);
    }
    const destination = normalizeBranch(refspec.slice(refspec.lastIndexOf(":") + 1));
    if (isProtectedBranch(destination)) return protectedBranch(destination, "pushes to");
  }
  return undefined;
}

/** `gh`, `glab` and `hub`: merging, marking ready and non-draft pull requests are refused. */
export function judgeForge(program: string, argv: string[]): ShellVerdict | undefined {
  const positionals = argv.slice(1).filter((word) => !word.startsWith("-"));
  const [group, action] = positionals;
  const request = group === "pr" || group === "mr" || program === "hub";
  if ((request && action === "merge") || (program === "hub" && group === "merge")) {
    return forbidden(`it merges a pull request; ${NO_MERGE}. Leave the draft open for review`);
  }
  if (request && action === "ready" && !argv.includes("--undo")) {
    return forbidden("it marks a pull request ready for review; agents leave pull requests as drafts");
  }
  const draft = argv.some((word) => word === "--draft" || word === "-d" || word === "--draft=true");
  if (request && action === "create" && !draft) {
    return forbidden("it opens a pull request that is not a draft; add `--draft`");
  }
  if (group === "api" && argv.some((word) => /\/merges?(?:[/?]|$)|mergepullrequest|automerge/i.test(word))) {
    return forbidden(`it calls the forge's merge API; ${NO_MERGE}`);
  }
  return undefined;
}

function protectedBranch(branch: string, verb: string): ShellVerdict {
  return forbidden(
    `it ${verb} the protected branch \`${branch}\`; main, master, trunk, develop and release/* are only changed by people. Work on your own branch instead`,
  );
}

function forbidden(why: string): ShellVerdict {
  return { rule: "forbidden-command", why };
}
