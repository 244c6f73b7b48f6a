import path from "node:path";
import picomatch from "picomatch/posix.js";
import { simpleGit } from "simple-git";
import type { AgentConfig, AgentPolicy } from "../../config/agent-schema.ts";
import { loadConfig } from "../../config/load-config.ts";
import type { DefectEnvelope } from "../../envelope/envelope.ts";
import { judgeDiffBudget } from "../../guardrails/rules/diff-budget.ts";
import { judgeForbiddenPath } from "../../guardrails/rules/forbidden-path.ts";
import { judgeImmutableTest } from "../../guardrails/rules/immutable-test.ts";
import type { GuardScope } from "../../guardrails/rules/scope.ts";
import { resolveWrite } from "../../guardrails/rules/write-scope.ts";
import { RunStore } from "../../store/run-store.ts";
import type { ToolContext } from "../context.ts";
import { targetRepository } from "./worktrees.ts";

// What a fix branch changed against the commit it started from, judged after the fact by the same rules
// that guard a writer as it writes: a branch can also be changed outside this run (by a person, a model
// seat with a shell), so the reviewer re-reads the whole diff rather than trusting the writes it saw.

export interface ChangedFile {
  /** Relative to the target root. */
  path: string;
  added: number;
  removed: number;
  /** The file is one of the target's own tests (under the profile's tests.path, or named *.test.* / *.spec.*). */
  test: boolean;
  /** Why the file bears on the finding (its location or suggested fix area), or undefined. */
  related?: string;
}

export interface GuardFinding {
  path: string;
  rule: string;
  reason: string;
}

export interface BranchDiff {
  branch: string;
  base: string;
  head: string;
  files: ChangedFile[];
  lines: number;
  /** Files outside the target root (the target is a folder of a larger repository). */
  outside: string[];
  /** Every rule the change breaks, judged with the fixer's policy. */
  guardrails: GuardFinding[];
  policy_of: string;
}

export async function branchDiff(
  context: ToolContext,
  branch: string,
  finding: DefectEnvelope | undefined,
): Promise<BranchDiff | string> {
  const repository = await targetRepository(context);
  if (typeof repository === "string") return repository;
  const git = simpleGit(repository.top);
  let head: string;
  let base: string;
  try {
    head = (await git.revparse([branch])).trim();
    // The checkout's commit is what the fix is measured against; the merge base ignores later commits.
    base = (await git.raw(["merge-base", "HEAD", branch])).trim();
  } catch (error) {
    return `no branch ${branch} in the target's repository: ${error instanceof Error ? error.message : String(error)}`;
  }
  const prefix = repository.relative === "" ? "" : `${repository.relative.split(path.sep).join("/")}/`;
  const numstat = await git.raw(["diff", "--numstat", "--no-renames", base, head]);
  const files: ChangedFile[] = [];
  const outside: string[] = [];
  const testFolder = context.target?.profile.tests?.path;
  const isTest = picomatch(["**/*.test.*", "**/*.spec.*", ...(testFolder ? [`${testFolder}/**`] : [])], {
    dot: true,
  });
  for (const line of numstat.split("\n")) {
    const [added, removed, file] = line.split("\t");
    if (!file) continue;
    if (!file.startsWith(prefix)) {
      outside.push(file);
      continue;
    }
    const relative = file.slice(prefix.length);
    const text = await git.show([`${head}:${file}`]).catch(() => "");
    const related = finding ? relation(relative, text, finding) : undefined;
    files.push({
      path: relative,
      // Binary files report "-": counted as one changed line each way, so they are never free.
      added: Number(added) || 1,
      removed: Number(removed) || 0,
      test: isTest(relative),
      ...(related ? { related } : {}),
    });
  }
  const policy = fixerPolicy(context);
  return {
    branch,
    base,
    head,
    files,
    lines: files.reduce((sum, file) => sum + file.added + file.removed, 0),
    outside,
    guardrails: judgeChange(
      context,
      files,
      policy,
      finding?.reproduction.test?.path ?? context.guard.immutableTest,
    ),
    policy_of: policy.agent.name,
  };
}

/** The change as a writer would have made it, file by file, through forbidden-path, immutable-test and diff-budget. */
function judgeChange(
  context: ToolContext,
  files: ChangedFile[],
  policy: { agent: AgentConfig },
  immutableTest: string | undefined,
): GuardFinding[] {
  const scope: GuardScope = {
    agent: policy.agent,
    system: context.system,
    target: context.target,
    guard: {
      ticketsFiled: 0,
      filesChanged: new Map(),
      ...(immutableTest ? { immutableTest } : {}),
    },
  };
  const found: GuardFinding[] = [];
  for (const file of files) {
    const lines = file.added + file.removed;
    const resolved = resolveWrite(file.path, "change", scope);
    const denial =
      "allowed" in resolved
        ? resolved
        : (judgeForbiddenPath(resolved, "change", scope) ??
          judgeImmutableTest(resolved, "change", scope) ??
          judgeDiffBudget(file.path, lines, scope));
    if (denial) found.push({ path: file.path, rule: denial.rule, reason: denial.reason });
    scope.guard.filesChanged.set(file.path, lines);
  }
  return found;
}

/**
 * The policy of the run's fixer (the agent whose loop_role is fixer in the run's configuration): a fix is
 * held to the budget its author was given. Without one, the reviewing agent's own policy, with the
 * immutable test always on.
 */
function fixerPolicy(context: ToolContext): { agent: AgentConfig } {
  const own = {
    agent: { ...context.agent, policy: { ...context.agent.policy, immutable_test: true } as AgentPolicy },
  };
  try {
    const started = RunStore.open(context.home, context.runId)
      .readLedger()
      .entries.find((entry) => entry.kind === "run_started");
    const dir = started?.data.config_dir;
    if (typeof dir !== "string") return own;
    for (const loaded of loadConfig(dir).agents.values()) {
      if (loaded.config.loop_role === "fixer") {
        return { agent: { ...loaded.config, policy: { ...loaded.config.policy, immutable_test: true } } };
      }
    }
  } catch {
    // A run without a readable configuration is judged by the reviewer's own policy.
  }
  return own;
}

/** Words of a location or fix area that could name a file or a route: "invoices", "orders", "billing". */
function significantWords(text: string): string[] {
  return [
    ...new Set(
      text
        .toLowerCase()
        .split(/[^a-z0-9_-]+/)
        .filter(
          (word) => word.length >= 4 && !/^(get|post|put|patch|delete|head|options|api|v\d+)$/.test(word),
        ),
    ),
  ];
}

/** Why a changed file bears on the finding, or undefined: the scope check of a review. */
export function relation(file: string, text: string, finding: DefectEnvelope): string | undefined {
  const { location } = finding;
  const area = finding.suggested_fix_area ?? undefined;
  if (area && (file === area || file.startsWith(`${area.replace(/\/$/, "")}/`))) {
    return `in the suggested fix area ${area}`;
  }
  if (location.kind === "endpoint" || location.kind === "page") {
    const route = location.value.replace(/^[A-Z]+\s+/, "").split("?")[0] ?? "";
    // `/api/orders/{id}/items` is written `/api/orders/:id/items` or `/api/orders/<id>/items` in code.
    const segments = route.split("/").filter((segment) => segment !== "" && !/^[{:<[]/.test(segment));
    const last = segments.at(-1);
    if (last && segments.length > 0) {
      const pattern = new RegExp(
        segments.map((segment) => segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("/(?:[^/\"'`]+/)*"),
      );
      if (pattern.test(text)) return `serves ${route}`;
    }
  } else if (location.kind === "file") {
    const located = location.value.split(":")[0] ?? "";
    if (file === located) return `is ${located}`;
    if (path.posix.dirname(file) === path.posix.dirname(located)) return `beside ${located}`;
  }
  const words = significantWords(`${location.value} ${area ?? ""}`);
  const name = file.toLowerCase();
  const hit = words.find((word) => name.includes(word));
  return hit ? `named after "${hit}" of ${location.value}` : undefined;
}
