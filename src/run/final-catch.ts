import type { SystemConfig } from "../config/system-schema.ts";
import type { DefectEnvelope } from "../envelope/envelope.ts";
import { isFileable } from "../envelope/envelope.ts";
import { createOrchestratorSeat } from "../seats/create-seat.ts";
import { decideGate, type GateReport } from "../seats/orchestrator/decide-gate.ts";
import type { OrchestratorSeat } from "../seats/seat.ts";
import type { RunContext } from "../tools/context.ts";

export interface FinalCatch {
  decided: number;
  failed: number;
  abstained: number;
  degraded: boolean;
  /** Findings the orchestrator held back for a person. */
  held: string[];
}

/**
 * The final catch: before the report, the orchestrator seat looks at every fileable finding once more.
 * It can hold a finding for a person; it can never invent one, and a failed decision never blocks a
 * finding a failing test proves (SPEC §9).
 */
export async function runFinalCatch(
  envelopes: readonly DefectEnvelope[],
  system: SystemConfig,
  context: Pick<RunContext, "record">,
  seat: OrchestratorSeat = createOrchestratorSeat(system.seats.orchestrator).seat,
): Promise<FinalCatch> {
  const threshold = system.thresholds.file_confidence;
  const fileable = envelopes.filter((envelope) => isFileable(envelope, threshold));
  const gate: GateReport = await decideGate(
    fileable.map((envelope) => ({
      id: envelope.id,
      testProven: envelope.evidence.some((item) => item.kind === "failing_test"),
      request: {
        kind: "final_catch",
        question: `File this finding? ${envelope.title}`,
        context: {
          testProven: envelope.evidence.some((item) => item.kind === "failing_test"),
          confidence: envelope.confidence,
          threshold,
          domain: envelope.domain,
          defect_class: envelope.defect_class,
          location: `${envelope.location.kind} ${envelope.location.value}`,
          summary: envelope.summary,
        },
        options: ["ACCEPT", "HOLD"],
      },
    })),
    seat,
  );
  const held: string[] = [];
  for (const verdict of gate.verdicts) {
    const choice = verdict.status === "decided" ? verdict.choice : verdict.status;
    if (choice === "HOLD" || choice === "held") held.push(verdict.id);
    context.record("decision_recorded", {
      gate: "final_catch",
      envelope_id: verdict.id,
      status: verdict.status,
      choice,
      ...(verdict.status === "decided" ? { rationale: verdict.rationale } : { note: verdict.note }),
    });
  }
  return {
    decided: gate.decided,
    failed: gate.failed,
    abstained: gate.abstained,
    degraded: gate.degraded,
    held,
  };
}
