import type { RunPlan, Spend } from "../router/run-state.ts";
import {
  type BudgetStop,
  BudgetStopError,
  type CallBudget,
  type CallCost,
  type CallReservation,
} from "../seats/call-budget.ts";

// The live side of the budget. The router learns what an invocation spent only when it ends, which is
// too late to stop a call in the middle of one; this meter is told about every model call as it happens
// (concurrent invocations included) and refuses one whose worst case could cross the run's or the
// agent's cap. It starts from what the router's state already counts, so a resumed run keeps its spend.

interface Account {
  spent: CallCost;
  /** Worst cases of calls in flight: a concurrent call must not spend what another may still need. */
  held: CallCost;
}

export interface InvocationBudget extends CallBudget {
  /** What this invocation's model calls cost so far (failed calls included). */
  spent(): CallCost;
  /** Why the last refused call was refused, if one was. */
  stop(): BudgetStop | undefined;
  /**
   * The invocation ended and its seat reported this total: what the meter did not see call by call (a
   * seat that spends through its own SDK, a scripted seat) is counted now, so later checks include it.
   */
  reconcile(total: CallCost): void;
}

export class SpendMeter {
  private readonly run: Account;
  private readonly agents = new Map<string, Account>();

  constructor(
    private readonly plan: Pick<RunPlan, "budget" | "agents">,
    spent: Spend = { usd: 0, tokens: 0 },
    agentSpent: Record<string, Spend> = {},
  ) {
    this.run = { spent: { ...spent }, held: { usd: 0, tokens: 0 } };
    for (const [agent, amount] of Object.entries(agentSpent)) {
      this.agents.set(agent, { spent: { ...amount }, held: { usd: 0, tokens: 0 } });
    }
  }

  /** Spent by the whole run so far, as the meter counts it. */
  totals(): CallCost {
    return { ...this.run.spent };
  }

  forInvocation(agent: string): InvocationBudget {
    const account = this.account(agent);
    const own: CallCost = { usd: 0, tokens: 0 };
    let refused: BudgetStop | undefined;
    const cap = this.plan.agents.find((candidate) => candidate.name === agent)?.budget ?? {};
    return {
      reserve: (worstCase): CallReservation => {
        const stop =
          overCap("run", agent, this.plan.budget, this.run, worstCase) ??
          overCap("agent", agent, cap, account, worstCase);
        if (stop !== undefined) {
          refused = stop;
          throw new BudgetStopError(stop);
        }
        for (const held of [this.run.held, account.held]) add(held, worstCase, 1);
        let settled = false;
        return {
          settle: (cost) => {
            if (settled) return;
            settled = true;
            for (const entry of [this.run, account]) {
              add(entry.held, worstCase, -1);
              add(entry.spent, cost, 1);
            }
            add(own, cost, 1);
          },
        };
      },
      spent: () => ({ ...own }),
      stop: () => refused,
      reconcile: (total) => {
        const unseen = {
          usd: Math.max(0, total.usd - own.usd),
          tokens: Math.max(0, total.tokens - own.tokens),
        };
        for (const entry of [this.run.spent, account.spent, own]) add(entry, unseen, 1);
      },
    };
  }

  private account(agent: string): Account {
    let account = this.agents.get(agent);
    if (account === undefined) {
      account = { spent: { usd: 0, tokens: 0 }, held: { usd: 0, tokens: 0 } };
      this.agents.set(agent, account);
    }
    return account;
  }
}

function overCap(
  scope: "run" | "agent",
  agent: string,
  cap: { usd?: number; tokens?: number },
  account: Account,
  worstCase: CallCost,
): BudgetStop | undefined {
  for (const unit of ["usd", "tokens"] as const) {
    const limit = cap[unit];
    if (limit === undefined) continue;
    const committed = account.spent[unit] + account.held[unit];
    if (committed + worstCase[unit] > limit) {
      return { scope, agent, unit, cap: limit, spent: committed, worstCase: worstCase[unit] };
    }
  }
  return undefined;
}

function add(target: CallCost, amount: CallCost, sign: 1 | -1): void {
  target.usd += sign * amount.usd;
  target.tokens += sign * amount.tokens;
}
