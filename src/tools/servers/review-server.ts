import { z } from "zod";
import { err, ok } from "../result.ts";
import { defineTool } from "../tool.ts";
import { branchDiff } from "../vcs/branch-diff.ts";

// Reading a fix branch for review: what it changed against the checkout, and which guardrail each change
// would have broken. Read-only: nothing here writes a file or a ref.

const branchDiffTool = defineTool({
  name: "branch_diff",
  server: "vcs",
  description:
    "What a branch changed against the checkout's commit: files (relative to the target root) with added and removed lines, which are the target's own tests, which bear on the finding's location, and every guardrail the change breaks under the fixer's policy (forbidden path classes, the immutable test, the diff budget).",
  input: z.strictObject({ branch: z.string().min(1).max(200), finding_id: z.string().optional() }),
  async run(input, context) {
    const finding = input.finding_id
      ? context.readEnvelopes().find((candidate) => candidate.id === input.finding_id)
      : undefined;
    if (input.finding_id && !finding) return err(`no finding ${input.finding_id} in this run`);
    const diff = await branchDiff(context, input.branch, finding);
    return typeof diff === "string" ? err(diff) : ok(diff);
  },
});

export const reviewTools = [branchDiffTool];
