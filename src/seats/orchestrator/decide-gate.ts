import type { Decision, DecisionRequest, OrchestratorSeat } from "../seat.ts";

// SPEC §9's degrade rules for a gate of decisions (a review gate, a final catch). A decision seat that
// fails or abstains never invents a verdict and never blocks an item a runnable test proves; a gate in
// which no decision was made says so, so a report can show the gate did not really run.

export interface GateItem {
  id: string;
  /** A failing test (or its passing re-run) proves the item: it goes through even without a decision. */
  testProven: boolean;
  request: DecisionRequest;
}

export type GateVerdict =
  | { id: string; status: "decided"; choice: string; rationale: string; decision: Decision }
  /** Test-proven, decision unavailable: let through, labelled so. */
  | { id: string; status: "accepted"; note: "accepted (decision unavailable)"; decision: Decision }
  /** Not test-proven, decision unavailable: held for a person, with no verdict invented. */
  | { id: string; status: "held"; note: "held for a person (decision unavailable)"; decision: Decision };

export interface GateReport {
  verdicts: GateVerdict[];
  decided: number;
  failed: number;
  abstained: number;
  /** True when the gate had items and not one of them got a real decision. */
  degraded: boolean;
}

export async function decideGate(items: GateItem[], seat: OrchestratorSeat): Promise<GateReport> {
  const verdicts: GateVerdict[] = [];
  // One at a time: decisions are few, and a model seat under a rate limit fares better sequentially.
  for (const item of items) {
    const decision = await decideSafely(seat, item.request);
    if (decision.status === "decided") {
      verdicts.push({
        id: item.id,
        status: "decided",
        choice: decision.choice,
        rationale: decision.rationale,
        decision,
      });
    } else if (item.testProven) {
      verdicts.push({ id: item.id, status: "accepted", note: "accepted (decision unavailable)", decision });
    } else {
      verdicts.push({
        id: item.id,
        status: "held",
        note: "held for a person (decision unavailable)",
        decision,
      });
    }
  }
  const count = (status: Decision["status"]) =>
    verdicts.filter((verdict) => verdict.decision.status === status).length;
  const decided = count("decided");
  return {
    verdicts,
    decided,
    failed: count("failed"),
    abstained: count("abstained"),
    degraded: items.length > 0 && decided === 0,
  };
}

/** A seat's throw or an answer outside the options counts as a failed decision, never as a verdict. */
async function decideSafely(seat: OrchestratorSeat, request: DecisionRequest): Promise<Decision> {
  let decision: Decision;
  try {
    decision = await seat.decide(request);
  } catch (error) {
    return {
      status: "failed",
      error: `${seat.backend} decision seat threw: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (decision.status === "decided" && !request.options.includes(decision.choice)) {
    return {
      status: "failed",
      error: `${seat.backend} decision seat answered "${decision.choice}", not one of ${request.options.join(", ")}`,
    };
  }
  return decision;
}
