import { type LanguageModelMiddleware, wrapLanguageModel } from "ai";
import type { SeatRef } from "../config/agent-schema.ts";
import type { SeatUsage } from "./seat.ts";

// A hard cap is checked before every model call, not between agent runs: one agent's loop can make many
// calls, and a check after the fact lets it spend past the cap. The seat asks the run's meter (through
// this small contract) for each call's worst case, and reports what each call cost, failed calls too.

/** What one model call may cost at most, or did cost. */
export interface CallCost {
  usd: number;
  tokens: number;
}

export interface CallReservation {
  /** The call ended (well or badly): replace the worst case held for it with what it cost. */
  settle(cost: CallCost): void;
}

/** The budget a seat spends from; the runner gives one per invocation. */
export interface CallBudget {
  /** Holds the worst case of the next call, or throws `BudgetStopError` when it could cross a cap. */
  reserve(worstCase: CallCost): CallReservation;
}

export interface BudgetStop {
  scope: "run" | "agent";
  agent: string;
  /** The cap in the unit that refused the call. */
  unit: "usd" | "tokens";
  cap: number;
  /** Spent (and held for calls in flight) when the call was refused. */
  spent: number;
  worstCase: number;
}

/** The next model call could cross a cap, so it was not made: a control working, not a failure. */
export class BudgetStopError extends Error {
  override readonly name = "BudgetStopError";
  constructor(readonly stop: BudgetStop) {
    super(
      `${stop.scope === "run" ? "the run's" : `${stop.agent}'s`} budget of ${formatAmount(stop.unit, stop.cap)} ` +
        `would be crossed: ${formatAmount(stop.unit, stop.spent)} spent, the next model call could cost up to ` +
        `${formatAmount(stop.unit, stop.worstCase)}; the call was not made`,
    );
  }
}

function formatAmount(unit: "usd" | "tokens", value: number): string {
  return unit === "usd" ? `$${value.toFixed(6)}` : `${Math.ceil(value)} tokens`;
}

/** Output tokens a model call may produce when the seat sets no `max_output_tokens`. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * Input tokens of a request, estimated from its size before it is sent. Three characters per token
 * over-counts English and JSON (closer to four), so the estimate errs towards refusing a call.
 */
export function estimateInputTokens(prompt: unknown, tools: unknown): number {
  const characters = JSON.stringify(prompt ?? "").length + JSON.stringify(tools ?? []).length;
  return Math.ceil(characters / 3);
}

export function costOf(usage: SeatUsage, price: SeatRef["price"]): CallCost {
  const usd =
    price === undefined
      ? 0
      : (usage.inputTokens * price.input_per_mtok + usage.outputTokens * price.output_per_mtok) / 1_000_000;
  return { usd, tokens: usage.inputTokens + usage.outputTokens };
}

type MeteredModel = Parameters<typeof wrapLanguageModel>[0]["model"];

/**
 * Wraps a model so every call (each step of a tool-calling loop included) reserves its worst case —
 * estimated input plus the output limit, at the seat's price — before it is sent, and settles what it
 * cost after: the usage the server reported, or for a failed call its estimated input, plus the output
 * limit when the answer was cut off midway (a timeout or a dropped connection may have been generated
 * and billed in full).
 */
export function meteredModel(
  model: MeteredModel,
  budget: CallBudget,
  ref: Pick<SeatRef, "price">,
  maxOutputTokens: number,
): MeteredModel {
  const middleware: LanguageModelMiddleware = {
    specificationVersion: "v3",
    wrapGenerate: async ({ doGenerate, params }) => {
      const input = estimateInputTokens(params.prompt, params.tools);
      const limit = params.maxOutputTokens ?? maxOutputTokens;
      const reservation = budget.reserve(costOf({ inputTokens: input, outputTokens: limit }, ref.price));
      try {
        const result = await doGenerate();
        const reported = {
          inputTokens: result.usage.inputTokens.total ?? input,
          outputTokens: result.usage.outputTokens.total ?? limit,
        };
        reservation.settle(costOf(reported, ref.price));
        return result;
      } catch (error) {
        const output = answeredNothing(error) ? 0 : limit;
        reservation.settle(costOf({ inputTokens: input, outputTokens: output }, ref.price));
        throw error;
      }
    },
  };
  return wrapLanguageModel({ model, middleware });
}

/** An HTTP error status means the server refused the request before generating anything. */
function answeredNothing(error: unknown): boolean {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === "number" && status >= 400 && status < 600 && status !== 408;
}
