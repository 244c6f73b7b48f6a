import type { AgentGate } from "../config/agent-schema.ts";
import type { ToolResult } from "../tools/result.ts";
import { SEAT_SPECIFICATION_VERSION, type SeatRequest, type SeatResult, type WorkerSeat } from "./seat.ts";

/**
 * A model seat behind a deterministic gate: the agent's builtin playbook runs first and records its
 * decision; only when that decision passes does the model get its own read, on top. The model cannot
 * loosen what the gate decided — it never runs when the gate did not pass — and it must record a
 * decision of its own, so a change the mechanical checks approved still meets an adversarial reader.
 */
export class GatedSeat implements WorkerSeat {
  readonly specificationVersion = SEAT_SPECIFICATION_VERSION;
  readonly backend: string;
  readonly model: string;

  constructor(
    private readonly gate: WorkerSeat,
    private readonly reader: WorkerSeat,
    private readonly rule: AgentGate,
  ) {
    this.backend = reader.backend;
    this.model = reader.model;
  }

  async run(request: SeatRequest): Promise<SeatResult> {
    const { tool, field, passes } = this.rule;
    let decided: Record<string, unknown> | undefined;
    const gated = await this.gate.run({
      ...request,
      callTool: async (name, input) => {
        const result = await request.callTool(name, input);
        if (name === tool && result.ok) decided = (input ?? {}) as Record<string, unknown>;
        return result;
      },
    });
    const decision = decided?.[field];
    if (decision !== passes) {
      request.log(
        `the ${request.agent} gate decided ${String(decision ?? "nothing")}; the model's read is not needed`,
      );
      return gated;
    }

    let readerDecided = false;
    const read = await this.reader.run({
      ...request,
      task: `${request.task}\n\n${gateNote(request.agent, tool, decided ?? {})}`,
      callTool: async (name, input): Promise<ToolResult> => {
        const result = await request.callTool(name, input);
        if (name === tool && result.ok) readerDecided = true;
        return result;
      },
      // The gate already satisfied the runner's must-call: the model owes a decision of its own.
      checkStop: () =>
        readerDecided
          ? request.checkStop()
          : { allow: false, reason: `record your own decision with ${tool} before finishing` },
    });
    return {
      ...read,
      turns: gated.turns + read.turns,
      warnings: [...gated.warnings, ...read.warnings],
    };
  }
}

/** What the model is told about the gate: its decision and every check it made, so it reads on from there. */
function gateNote(agent: string, tool: string, decided: Record<string, unknown>): string {
  const checks = Array.isArray(decided.checks)
    ? (decided.checks as Array<{ name?: unknown; passed?: unknown; detail?: unknown }>).map(
        (check) => `- ${String(check.name)}: ${check.passed ? "passed" : "failed"} — ${String(check.detail)}`,
      )
    : [];
  return [
    `## The deterministic gate has passed this`,
    "",
    `${agent}'s builtin playbook already judged it and recorded ${String(decided.decision ?? "a decision")} through ${tool}: ${String(decided.rationale ?? "")}`,
    ...(checks.length > 0 ? ["", "Its checks:", ...checks] : []),
    "",
    "Those checks are mechanical and already run; repeat one only if you doubt it. Your read comes on top:",
    "look for what they cannot see — a fix of the symptom rather than the cause, another input, role or",
    `route that still triggers the defect, a weakened check elsewhere. Then record your own decision with ${tool}.`,
  ].join("\n");
}
