import { z } from "zod";
import { ok } from "../result.ts";
import { defineTool } from "../tool.ts";

// Verdicts, reviews and reproductions are typed ledger entries written through these tools; the router
// reads them from the ledger, never from an agent's prose.

const TestRun = z.strictObject({
  command: z.string(),
  passed: z.boolean(),
  output_artifact: z.string().optional(),
});

const recordReproduction = defineTool({
  name: "record_reproduction",
  server: "decisions",
  description: "Record whether a finding reproduced, its flake rate, and the failing test committed for it.",
  input: z.strictObject({
    finding_id: z.string(),
    reproduced: z.boolean(),
    flake_rate: z.number().min(0).max(1),
    test: z.strictObject({ path: z.string(), command: z.string(), branch: z.string() }).optional(),
    notes: z.string().optional(),
  }),
  async run(input, context) {
    context.record("finding_reproduced", { ...input }, context.agent.name);
    return ok({ recorded: true });
  },
});

const recordReview = defineTool({
  name: "record_review",
  server: "decisions",
  description: "Record your review of a fix: APPROVE, REQUEST_CHANGES (say what) or ESCALATE (say why).",
  input: z.strictObject({
    ticket: z.string(),
    decision: z.enum(["APPROVE", "REQUEST_CHANGES", "ESCALATE"]),
    branch: z.string(),
    rationale: z.string().min(1),
  }),
  async run(input, context) {
    context.record("review_recorded", { ...input }, context.agent.name);
    return ok({ recorded: true });
  },
});

const recordVerdict = defineTool({
  name: "record_verdict",
  server: "decisions",
  description:
    "Record the verdict of re-running a finding's failing test on a branch: VERIFIED, NOT_FIXED or REGRESSED.",
  input: z.strictObject({
    ticket: z.string(),
    verdict: z.enum(["VERIFIED", "NOT_FIXED", "REGRESSED"]),
    branch: z.string(),
    test_run: TestRun,
  }),
  async run(input, context) {
    context.record("verdict_recorded", { ...input }, context.agent.name);
    return ok({ recorded: true });
  },
});

export const decisionTools = [recordReproduction, recordReview, recordVerdict];
