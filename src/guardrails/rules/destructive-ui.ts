import type { GuardedAction } from "../actions.ts";
import type { Denial, GuardScope } from "./scope.ts";
import { deny, quote } from "./scope.ts";

// destructive-ui: in the browser, a control that signs out, deletes, archives or spends is operated only
// on a record the run created itself; anywhere else it could destroy what someone else made (or end the
// session every later step relies on). Which controls read destructive is the tool's judgement of the
// control's name and target; this rule enforces it, whatever the prompt said.

export function judgeUiAction(
  action: Extract<GuardedAction, { kind: "ui_action" }>,
  scope: GuardScope,
): Denial | undefined {
  if (!action.destructive || action.createdByRun) return undefined;
  return deny(
    "destructive-ui",
    `${scope.agent.name} may not ${action.action} ${quote(action.control)} on ${quote(action.url)}: ${action.destructive}, and the page does not show a record this run created. Create a record of your own and act on it, or report what you would need to test.`,
  );
}
