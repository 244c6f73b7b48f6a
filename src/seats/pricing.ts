import type { SeatRef } from "../config/agent-schema.ts";
import type { SeatUsage, SeatWarning } from "./seat.ts";

// Cost comes only from the price a user configured: a guessed price table would go stale silently and
// make `qaas score`'s cost per finding a fiction. Without a price the cost is 0 and the user is told.

export interface PricedUsage {
  costUsd: number;
  warnings: SeatWarning[];
}

export function priceUsage(
  usage: SeatUsage,
  seat: Pick<SeatRef, "price" | "is_local" | "model">,
): PricedUsage {
  const price = seat.price;
  if (price === undefined) {
    // A model on this machine costs nothing per token; a remote one without a price is a budget blind spot.
    if (seat.is_local === true) return { costUsd: 0, warnings: [] };
    return {
      costUsd: 0,
      warnings: [
        {
          type: "notice",
          feature: "price",
          message:
            `no price configured for model "${seat.model ?? "(unnamed)"}": its cost is recorded as $0 and ` +
            "budgets in USD cannot stop it; set price.input_per_mtok and price.output_per_mtok on the seat",
        },
      ],
    };
  }
  const costUsd =
    (usage.inputTokens * price.input_per_mtok + usage.outputTokens * price.output_per_mtok) / 1_000_000;
  return { costUsd, warnings: [] };
}

export function addUsage(left: SeatUsage, right: SeatUsage): SeatUsage {
  return {
    inputTokens: left.inputTokens + right.inputTokens,
    outputTokens: left.outputTokens + right.outputTokens,
  };
}

export const ZERO_USAGE: SeatUsage = Object.freeze({ inputTokens: 0, outputTokens: 0 });
