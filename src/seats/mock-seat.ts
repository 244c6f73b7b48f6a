import type { ToolResult } from "../tools/result.ts";
import {
  SEAT_SPECIFICATION_VERSION,
  type SeatRequest,
  type SeatResult,
  type SeatUsage,
  type StopCheck,
  type WorkerSeat,
} from "./seat.ts";

// The seat tests use in place of a model (like the AI SDK's MockLanguageModel): it records every request
// and plays scripted behaviour. Scripted tool calls go through `request.callTool`, so the guardrails and
// the ledger see them exactly as they would a model's.

export type MockSeatStep =
  | { tool: string; input: unknown }
  /** The agent wants to finish with this text; the stop hook is asked, as for a model. */
  | { finish: string }
  | { throw: Error }
  | { usage: Partial<SeatUsage>; costUsd?: number };

export type MockSeatBehaviour = ((request: SeatRequest) => Promise<SeatResult>) | { script: MockSeatStep[] };

export interface MockSeatOptions {
  model?: string;
  /** One behaviour for every call, or one per call in order (a call past the end throws). */
  run?: MockSeatBehaviour | MockSeatBehaviour[];
}

export interface MockToolCall {
  agent: string;
  tool: string;
  input: unknown;
  result: ToolResult;
}

export class MockSeat implements WorkerSeat {
  readonly specificationVersion = SEAT_SPECIFICATION_VERSION;
  readonly backend = "mock";
  readonly model: string;
  /** Every request, in order. */
  readonly calls: SeatRequest[] = [];
  /** Every scripted tool call with the answer it got. */
  readonly toolCalls: MockToolCall[] = [];
  /** Every answer of the stop hook. */
  readonly stopChecks: StopCheck[] = [];
  private readonly behaviour: MockSeatOptions["run"];

  constructor(options: MockSeatOptions = {}) {
    this.model = options.model ?? "mock-model";
    this.behaviour = options.run;
  }

  async run(request: SeatRequest): Promise<SeatResult> {
    const callIndex = this.calls.length;
    this.calls.push(request);
    const behaviour = Array.isArray(this.behaviour) ? this.behaviour[callIndex] : this.behaviour;
    if (behaviour === undefined) {
      throw new Error(
        Array.isArray(this.behaviour)
          ? `MockSeat: no behaviour scripted for call ${callIndex + 1} (agent ${request.agent}); ${this.behaviour.length} scripted`
          : "MockSeat: not implemented",
      );
    }
    if (typeof behaviour === "function") return behaviour(request);
    return this.playScript(behaviour.script, request);
  }

  private async playScript(script: MockSeatStep[], request: SeatRequest): Promise<SeatResult> {
    let turns = 0;
    let costUsd = 0;
    const usage: SeatUsage = { inputTokens: 0, outputTokens: 0 };
    let refusedOnce = false;
    const result = (outcome: SeatResult["outcome"], finalText?: string): SeatResult => ({
      outcome,
      turns,
      usage: { ...usage },
      costUsd,
      ...(finalText === undefined || finalText === "" ? {} : { finalText }),
      warnings: [],
    });
    // Mirrors the model loop: the first refusal is heard and the script goes on; the second lets it go.
    const wantsToFinish = (finalText: string): SeatResult | undefined => {
      const check = request.checkStop();
      this.stopChecks.push(check);
      if (check.allow) return result("completed", finalText);
      if (refusedOnce) {
        request.log(
          `${request.agent}: stop refused again (${check.reason ?? "no reason"}); letting the agent go`,
        );
        return result("stopped", finalText);
      }
      refusedOnce = true;
      request.log(`${request.agent}: not finished yet: ${check.reason ?? "no reason"}`);
      return undefined;
    };

    for (const step of script) {
      if (request.signal.aborted) throw request.signal.reason ?? new Error("MockSeat: aborted");
      if ("throw" in step) throw step.throw;
      if ("usage" in step) {
        usage.inputTokens += step.usage.inputTokens ?? 0;
        usage.outputTokens += step.usage.outputTokens ?? 0;
        costUsd += step.costUsd ?? 0;
        continue;
      }
      if ("finish" in step) {
        const ended = wantsToFinish(step.finish);
        if (ended !== undefined) return ended;
        continue;
      }
      if (turns >= request.maxTurns) return result("max_turns");
      turns += 1;
      const toolResult = await request.callTool(step.tool, step.input);
      this.toolCalls.push({ agent: request.agent, tool: step.tool, input: step.input, result: toolResult });
    }
    // A script that runs out without finishing finishes silently, and the stop hook is asked once more.
    return wantsToFinish("") ?? result("stopped");
  }
}
