import type { Denial, GuardScope } from "./scope.ts";
import { deny } from "./scope.ts";

// ticket-cap: only agents whose policy says so file tickets, and a run files at most `ticket_cap` of
// them; past the cap the router escalates to a person instead of flooding the tracker.

export function judgeTicket(scope: GuardScope): Denial | undefined {
  const { agent, guard, system } = scope;
  if (!agent.policy.may_file_tickets) {
    return deny(
      "ticket-cap",
      `${agent.name} may not file a ticket: its policy does not allow filing tickets. Hand the finding on in a DefectEnvelope instead; the agent that files tickets will file it.`,
    );
  }
  if (guard.ticketsFiled >= system.ticket_cap) {
    return deny(
      "ticket-cap",
      `${agent.name} may not file another ticket: this run has filed ${guard.ticketsFiled}, its cap of ${system.ticket_cap}. The router escalates the remaining findings to a person; stop filing and finish your work.`,
    );
  }
  return undefined;
}
