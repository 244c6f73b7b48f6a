import { QaasError } from "../errors.ts";

// An exploratory run spends three things: steps, wall-clock minutes and model tokens. Each has a default and
// a range; a value asked outside the range is not an error but is pulled back to the nearest bound and named,
// so the report can say "you asked for 40 steps, the run used 12" instead of silently ignoring the request.

export type BudgetField = "steps" | "minutes" | "tokens";

export interface ExploreBudget {
  steps: number;
  minutes: number;
  tokens: number;
}

export interface ClampedValue {
  field: BudgetField;
  asked: number;
  used: number;
}

export interface ResolvedBudget {
  budget: ExploreBudget;
  clamped: ClampedValue[];
}

export const BUDGET_LIMITS: Readonly<Record<BudgetField, { default: number; min: number; max: number }>> = {
  steps: { default: 8, min: 1, max: 12 },
  minutes: { default: 10, min: 3, max: 15 },
  tokens: { default: 150_000, min: 20_000, max: 400_000 },
};

const FIELDS = Object.keys(BUDGET_LIMITS) as BudgetField[];

function isBudgetField(key: string): key is BudgetField {
  return (FIELDS as string[]).includes(key);
}

/**
 * Reads `steps=8,minutes=10,tokens=150000` (any subset, any order; empty or undefined means all defaults)
 * and answers the budget to use plus every value that had to be clamped. A malformed entry, an unknown key,
 * a repeated key or a value that is not a positive integer is an error naming it.
 */
export function parseBudget(text: string | undefined): ResolvedBudget {
  const asked: Partial<Record<BudgetField, number>> = {};
  for (const raw of (text ?? "").split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const equals = entry.indexOf("=");
    if (equals <= 0) {
      throw new QaasError("BAD_BUDGET", `budget entry "${entry}" is not key=value (e.g. steps=8,minutes=10)`);
    }
    const key = entry.slice(0, equals).trim().toLowerCase();
    const value = entry.slice(equals + 1).trim();
    if (!isBudgetField(key)) {
      throw new QaasError("BAD_BUDGET", `unknown budget key "${key}"; known keys: ${FIELDS.join(", ")}`);
    }
    if (asked[key] !== undefined) throw new QaasError("BAD_BUDGET", `budget key "${key}" is given twice`);
    if (!/^\d+$/.test(value) || Number(value) <= 0) {
      throw new QaasError("BAD_BUDGET", `budget ${key}="${value}" is not a positive whole number`);
    }
    asked[key] = Number(value);
  }
  return resolveBudget(asked);
}

/** Fills defaults and clamps every asked value into its range, naming each one that moved. */
export function resolveBudget(asked: Partial<ExploreBudget>): ResolvedBudget {
  const budget = {} as ExploreBudget;
  const clamped: ClampedValue[] = [];
  for (const field of FIELDS) {
    const limits = BUDGET_LIMITS[field];
    const wanted = asked[field];
    if (wanted === undefined) {
      budget[field] = limits.default;
      continue;
    }
    const used = Math.min(limits.max, Math.max(limits.min, wanted));
    budget[field] = used;
    if (used !== wanted) clamped.push({ field, asked: wanted, used });
  }
  return { budget, clamped };
}
