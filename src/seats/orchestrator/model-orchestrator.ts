import { err, ok } from "../../tools/result.ts";
import {
  type Decision,
  type DecisionRequest,
  type OrchestratorSeat,
  SEAT_SPECIFICATION_VERSION,
  type SeatRequest,
  type SeatTool,
  type WorkerSeat,
} from "../seat.ts";

// A decision made by a model in any worker seat. The model must answer through the one `decide` tool;
// whatever else happens — an error, a choice outside the options, no call at all — becomes `failed` or
// `abstained`, never a verdict the model did not give.

export const DECIDE_TOOL_NAME = "decide";

const DEFAULT_SYSTEM =
  "You are the orchestrator of a QA team. You are asked one question with a fixed list of options. " +
  `Weigh the context given, then answer by calling the ${DECIDE_TOOL_NAME} tool exactly once with your ` +
  "choice (one of the options, spelled exactly) and a short rationale. Do not answer in prose.";

export interface ModelOrchestratorOptions {
  /** Turns for one decision; a correction after an invalid choice needs the second. */
  maxTurns?: number;
  system?: string;
  log?: (message: string) => void;
}

export class ModelOrchestrator implements OrchestratorSeat {
  readonly specificationVersion = SEAT_SPECIFICATION_VERSION;
  readonly backend: string;

  constructor(
    private readonly seat: WorkerSeat,
    private readonly options: ModelOrchestratorOptions = {},
  ) {
    this.backend = seat.backend;
  }

  async decide(request: DecisionRequest): Promise<Decision> {
    let answer: { choice: string; rationale: string } | undefined;
    let invalidChoice: string | undefined;
    const seatRequest: SeatRequest = {
      agent: "ORCHESTRATOR",
      system: this.options.system ?? DEFAULT_SYSTEM,
      task: renderDecision(request),
      taskData: {
        kind: request.kind,
        question: request.question,
        context: request.context,
        options: request.options,
      },
      tools: [decideTool(request.options)],
      maxTurns: this.options.maxTurns ?? 3,
      callTool: async (name, input) => {
        if (name !== DECIDE_TOOL_NAME)
          return err(`unknown tool "${name}"; the only tool is ${DECIDE_TOOL_NAME}`);
        if (answer !== undefined) return err(`already decided: ${answer.choice}`);
        const { choice, rationale } = (input ?? {}) as { choice?: unknown; rationale?: unknown };
        if (typeof choice !== "string" || !request.options.includes(choice)) {
          invalidChoice = String(choice);
          return err(`choice must be exactly one of: ${request.options.join(", ")}`);
        }
        answer = { choice, rationale: typeof rationale === "string" ? rationale : "" };
        return ok({ recorded: choice });
      },
      checkStop: () =>
        answer !== undefined
          ? { allow: true }
          : {
              allow: false,
              reason: `Answer by calling ${DECIDE_TOOL_NAME} with one of: ${request.options.join(", ")}.`,
            },
      log: (message) => this.options.log?.(message),
      signal: new AbortController().signal,
    };
    try {
      await this.seat.run(seatRequest);
    } catch (error) {
      return {
        status: "failed",
        error: `${this.backend} decision seat failed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    if (answer !== undefined) return { status: "decided", ...answer };
    if (invalidChoice !== undefined) {
      return {
        status: "failed",
        error: `the model chose "${invalidChoice}", which is not one of the options (${request.options.join(", ")})`,
      };
    }
    return { status: "abstained", rationale: `the model did not call ${DECIDE_TOOL_NAME}` };
  }
}

function decideTool(options: string[]): SeatTool {
  return {
    name: DECIDE_TOOL_NAME,
    description: "Record your decision: one of the listed options, with a short rationale.",
    inputSchema: {
      type: "object",
      properties: {
        choice: { type: "string", enum: options, description: "Exactly one of the options." },
        rationale: { type: "string", description: "Why, in one or two sentences." },
      },
      required: ["choice", "rationale"],
      additionalProperties: false,
    },
  };
}

function renderDecision(request: DecisionRequest): string {
  return [
    `Decision (${request.kind}): ${request.question}`,
    `Options: ${request.options.join(", ")}`,
    "Context:",
    JSON.stringify(request.context, null, 2),
  ].join("\n");
}
