import { z } from "zod";
import { isFileable } from "../../envelope/envelope.ts";
import { err, ok } from "../result.ts";
import { defineTool } from "../tool.ts";
import { branchDiff } from "../vcs/branch-diff.ts";
import { heldReason } from "./envelope-server.ts";

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
  description:
    "Record whether a finding reproduced (status reproduced, flaky or not_reproduced; untestable when it has no runnable test), its flake rate, the test run and the branch the test was committed on. Only reproduced findings stay fileable.",
  input: z.strictObject({
    finding_id: z.string(),
    reproduced: z.boolean(),
    status: z.enum(["reproduced", "flaky", "not_reproduced", "untestable"]).optional(),
    flake_rate: z.number().min(0).max(1),
    test: z.strictObject({ path: z.string(), command: z.string(), branch: z.string() }).optional(),
    output_artifact: z.string().optional(),
    notes: z.string().optional(),
  }),
  async run(input, context) {
    const envelope = context.readEnvelopes().find((candidate) => candidate.id === input.finding_id);
    if (!envelope) return err(`no finding ${input.finding_id} in this run (list_findings shows them)`);
    const status = input.status ?? (input.reproduced ? "reproduced" : "not_reproduced");
    const threshold = context.system.thresholds.file_confidence;
    const wasFileable = isFileable(envelope, threshold);
    // The outcome goes on the envelope itself, so isFileable (and so TRIAGE) sees it: a finding whose test
    // did not fail, or failed only sometimes, is held for a person rather than filed.
    if (status === "not_reproduced") envelope.reproduction.not_reproducible = true;
    if (status !== "untestable") envelope.reproduction.flake_rate = input.flake_rate;
    if (input.test && envelope.reproduction.test) envelope.reproduction.test.branch = input.test.branch;
    const fileable = isFileable(envelope, threshold);
    if (!fileable && envelope.tracker.state === "unfiled") envelope.tracker.state = "held";
    context.writeEnvelope(envelope);
    context.record(
      "finding_reproduced",
      { ...input, envelope_id: input.finding_id, status, fileable },
      context.agent.name,
    );
    if (wasFileable && !fileable) {
      context.record(
        "envelope_held",
        { envelope_id: envelope.id, reason: heldReason(envelope, threshold) },
        context.agent.name,
      );
    }
    return ok({ recorded: true, status, fileable });
  },
});

const recordReview = defineTool({
  name: "record_review",
  server: "decisions",
  description:
    "Record your review of a fix: APPROVE, REQUEST_CHANGES (say what) or ESCALATE (say why), optionally with each check you made and its outcome.",
  input: z.strictObject({
    ticket: z.string(),
    decision: z.enum(["APPROVE", "REQUEST_CHANGES", "ESCALATE"]),
    branch: z.string(),
    rationale: z.string().min(1),
    /** Each check the review made and how it came out, so the ledger shows what was judged, not only the decision. */
    checks: z
      .array(z.strictObject({ name: z.string(), passed: z.boolean(), detail: z.string().max(2000) }))
      .max(50)
      .optional(),
  }),
  async run(input, context) {
    if (input.decision === "APPROVE") {
      // Whoever reviews (a playbook or a model), a branch that breaks a guardrail is not approvable.
      const diff = await branchDiff(context, input.branch, undefined);
      if (typeof diff !== "string" && diff.guardrails.length > 0) {
        return err(
          `APPROVE refused: the branch breaks ${diff.guardrails.map((found) => `${found.rule} (${found.path})`).join(", ")}; record REQUEST_CHANGES, or ESCALATE for a forbidden path`,
        );
      }
    }
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
