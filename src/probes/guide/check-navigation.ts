import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { ToolContext } from "../../tools/context.ts";
import { BudgetExhaustedError } from "../http/http-client.ts";
import { findDeadEnds } from "./dead-end.ts";
import { closingStats, type GuideLimits, openGuideScope } from "./open-scope.ts";
import { findUndiscoverable } from "./undiscoverable.ts";

// check_navigation: walk the UI from its entry as each role, then judge what a person can find there
// against what the application serves: undiscoverable pages and dead ends. Reading only: the walk never
// submits a form or follows a sign-out or delete link, and the checks only GET.

export interface GuideOutcome {
  candidates: EnvelopeDraft[];
  stats: Record<string, unknown>;
}

export async function checkNavigation(
  context: ToolContext,
  input: GuideLimits = {},
): Promise<GuideOutcome | string> {
  const opened = await openGuideScope(context, "check_navigation", input);
  if (typeof opened === "string") return opened;
  const { scope, budget, stats } = opened;
  const candidates: EnvelopeDraft[] = [];
  for (const [name, check] of [
    ["undiscoverable", findUndiscoverable],
    ["dead_end", findDeadEnds],
  ] as const) {
    try {
      const outcome = await check(scope);
      candidates.push(...outcome.candidates);
      stats[name] = outcome.stats;
    } catch (error) {
      // A spent budget ends this check with what it has; anything else is reported, not hidden.
      stats[name] = {
        error: error instanceof BudgetExhaustedError ? "the request budget is spent" : String(error),
      };
    }
  }
  return { candidates, stats: { ...stats, ...closingStats(scope, budget) } };
}
