import { z } from "zod";
import {
  type Decision,
  type DecisionRequest,
  type OrchestratorSeat,
  SEAT_SPECIFICATION_VERSION,
} from "../seat.ts";

// The default orchestrator: a few fixed rules over facts the router puts in `DecisionRequest.context`.
// It answers only when the facts it needs are there and its verdict is one of the options; otherwise it
// abstains, and the gate's degrade rules take over. It never guesses.
//
// review_gate    context: { testPassed, diff: {files, lines}, diffBudget?: {files, lines}, forbiddenPathsTouched? }
//                forbiddenPathsTouched non-empty → ESCALATE; testPassed false → REJECT;
//                testPassed true and the diff within budget → APPROVE; over budget → REJECT.
// final_catch    context: { testProven?, confidence?, threshold? }
//                testProven → ACCEPT; confidence ≥ threshold → ACCEPT; below → HOLD.
// escalation     context: { forbiddenPathsTouched?, attempts?, maxAttempts? }
//                forbiddenPathsTouched non-empty → ESCALATE; attempts < maxAttempts → RETRY; else ESCALATE.

export const RULE_CHOICES = {
  approve: "APPROVE",
  reject: "REJECT",
  escalate: "ESCALATE",
  accept: "ACCEPT",
  hold: "HOLD",
  retry: "RETRY",
} as const;

const Size = z.object({ files: z.number().int().min(0), lines: z.number().int().min(0) });

const ReviewContext = z.object({
  testPassed: z.boolean().optional(),
  diff: Size.optional(),
  diffBudget: Size.optional(),
  forbiddenPathsTouched: z.array(z.string()).optional(),
});

const FinalCatchContext = z.object({
  testProven: z.boolean().optional(),
  confidence: z.number().min(0).max(1).optional(),
  threshold: z.number().min(0).max(1).optional(),
});

const EscalationContext = z.object({
  forbiddenPathsTouched: z.array(z.string()).optional(),
  attempts: z.number().int().min(0).optional(),
  maxAttempts: z.number().int().min(0).optional(),
});

type Verdict = { choice: string; rationale: string } | { abstain: string };

export class RulesOrchestrator implements OrchestratorSeat {
  readonly specificationVersion = SEAT_SPECIFICATION_VERSION;
  readonly backend = "rules";

  async decide(request: DecisionRequest): Promise<Decision> {
    const verdict = this.judge(request);
    if ("abstain" in verdict) return { status: "abstained", rationale: verdict.abstain };
    const option = request.options.find((candidate) => candidate.toUpperCase() === verdict.choice);
    if (option === undefined) {
      return {
        status: "abstained",
        rationale: `the rules would answer ${verdict.choice}, which is not among the options (${request.options.join(", ")})`,
      };
    }
    return { status: "decided", choice: option, rationale: verdict.rationale };
  }

  private judge(request: DecisionRequest): Verdict {
    switch (request.kind) {
      case "review_gate":
        return judgeReview(request.context);
      case "final_catch":
        return judgeFinalCatch(request.context);
      case "escalation":
        return judgeEscalation(request.context);
    }
  }
}

function judgeReview(raw: Record<string, unknown>): Verdict {
  const parsed = ReviewContext.safeParse(raw);
  if (!parsed.success)
    return { abstain: `review context is malformed: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  const context = parsed.data;
  if (context.forbiddenPathsTouched !== undefined && context.forbiddenPathsTouched.length > 0) {
    return {
      choice: RULE_CHOICES.escalate,
      rationale: `the change touches forbidden paths (${context.forbiddenPathsTouched.join(", ")}); a person must review it`,
    };
  }
  if (context.testPassed === undefined)
    return { abstain: "no verifier result (testPassed) to judge the change by" };
  if (!context.testPassed)
    return { choice: RULE_CHOICES.reject, rationale: "the failing test still fails after the fix" };
  if (context.diff === undefined) return { abstain: "no diff size to check against the budget" };
  const budget = context.diffBudget;
  if (budget !== undefined && (context.diff.files > budget.files || context.diff.lines > budget.lines)) {
    return {
      choice: RULE_CHOICES.reject,
      rationale: `the diff (${context.diff.files} files, ${context.diff.lines} lines) exceeds the budget (${budget.files} files, ${budget.lines} lines)`,
    };
  }
  return {
    choice: RULE_CHOICES.approve,
    rationale: `the test now passes and the diff (${context.diff.files} files, ${context.diff.lines} lines) is within budget`,
  };
}

function judgeFinalCatch(raw: Record<string, unknown>): Verdict {
  const parsed = FinalCatchContext.safeParse(raw);
  if (!parsed.success)
    return { abstain: `final-catch context is malformed: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  const context = parsed.data;
  if (context.testProven === true)
    return { choice: RULE_CHOICES.accept, rationale: "a runnable failing test proves it" };
  if (context.confidence === undefined || context.threshold === undefined) {
    return { abstain: "not test-proven, and no confidence and threshold to weigh it by" };
  }
  return context.confidence >= context.threshold
    ? {
        choice: RULE_CHOICES.accept,
        rationale: `confidence ${context.confidence} meets the threshold ${context.threshold}`,
      }
    : {
        choice: RULE_CHOICES.hold,
        rationale: `confidence ${context.confidence} is below the threshold ${context.threshold}`,
      };
}

function judgeEscalation(raw: Record<string, unknown>): Verdict {
  const parsed = EscalationContext.safeParse(raw);
  if (!parsed.success)
    return { abstain: `escalation context is malformed: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  const context = parsed.data;
  if (context.forbiddenPathsTouched !== undefined && context.forbiddenPathsTouched.length > 0) {
    return {
      choice: RULE_CHOICES.escalate,
      rationale: `forbidden paths involved (${context.forbiddenPathsTouched.join(", ")})`,
    };
  }
  if (context.attempts === undefined || context.maxAttempts === undefined) {
    return { abstain: "no attempt count to decide between retrying and escalating" };
  }
  return context.attempts < context.maxAttempts
    ? { choice: RULE_CHOICES.retry, rationale: `attempt ${context.attempts} of ${context.maxAttempts}` }
    : { choice: RULE_CHOICES.escalate, rationale: `all ${context.maxAttempts} attempts used` };
}
