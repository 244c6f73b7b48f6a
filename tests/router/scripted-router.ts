import { execute } from "../../src/router/executor.ts";
import type {
  AgentOutcome,
  AgentPlan,
  Invocation,
  RouterEvent,
  RunPlan,
  RunState,
} from "../../src/router/run-state.ts";
import { initialState } from "../../src/router/run-state.ts";
import type { LedgerEntry, LedgerKind } from "../../src/store/ledger-kinds.ts";

// Drives the real router and executor with scripted agents: each agent answers from a list of outcomes
// (one per invocation), so a test can walk any branch of the state machine.

export type Script = Record<
  string,
  Array<Partial<AgentOutcome> | { fail: string; transient?: boolean } | { skip: string }>
>;

export function plan(
  agents: Array<Partial<AgentPlan> & { name: string }>,
  overrides: Partial<RunPlan> = {},
): RunPlan {
  return {
    agents: agents.map((agent) => ({
      phase: "discover",
      cardinality: "per_run",
      exclusive: false,
      budget: {},
      ...agent,
    })),
    concurrency: 2,
    budget: {},
    retries: { attempts: 2, backoffMs: 10 },
    loop: { maxReopens: 2, maxRoundTrips: 2 },
    tickets: [],
    ...overrides,
  };
}

export async function runScripted(
  runPlan: RunPlan,
  script: Script,
  options: { start?: RunState; first?: RouterEvent; observe?: (state: RunState) => void } = {},
) {
  const entries: LedgerEntry[] = [];
  const dispatched: Invocation[] = [];
  const cursor = new Map<string, number>();
  const record = (kind: LedgerKind, data: Record<string, unknown>) => {
    const entry: LedgerEntry = { seq: entries.length + 1, at: new Date().toISOString(), kind, data };
    entries.push(entry);
    return entry;
  };
  const state = await execute(
    options.start ?? initialState(),
    options.first ?? { type: "run.start", plan: runPlan },
    {
      record,
      ...(options.observe ? { observe: options.observe } : {}),
      sleep: async () => {},
      async dispatch(invocation) {
        dispatched.push(invocation);
        const index = cursor.get(invocation.agent) ?? 0;
        cursor.set(invocation.agent, index + 1);
        const steps = script[invocation.agent] ?? [];
        const step = steps[Math.min(index, steps.length - 1)] ?? {};
        if ("fail" in step) {
          return {
            type: "agent.failed",
            invocation: invocation.id,
            error: step.fail,
            transient: step.transient ?? false,
          };
        }
        if ("skip" in step) return { type: "agent.skipped", invocation: invocation.id, reason: step.skip };
        const result: AgentOutcome = { outcome: "completed", costUsd: 0, tokens: 0, findings: [], ...step };
        return { type: "agent.done", invocation: invocation.id, result };
      },
    },
  );
  const kinds = (kind: LedgerKind) =>
    entries.filter((entry) => entry.kind === kind).map((entry) => entry.data);
  return { state, entries, dispatched, kinds, order: dispatched.map((invocation) => invocation.agent) };
}
