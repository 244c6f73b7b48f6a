import type { LedgerEntry, LedgerKind } from "../store/ledger-kinds.ts";
import {
  type Invocation,
  initialState,
  type RouterEffect,
  type RouterEvent,
  type RunState,
} from "./run-state.ts";
import { transition } from "./transition.ts";

// Performs the router's effects and feeds their results back as events. Each event is written to the
// ledger BEFORE it is applied and each effect before it is performed, so a run killed at any instant
// can be rebuilt by replaying its recorded events (see `replay`).

export interface ExecutorDeps {
  record(kind: LedgerKind, data: Record<string, unknown>): LedgerEntry;
  /** Runs one invocation to its end and answers the event describing how it ended. Never throws. */
  dispatch(invocation: Invocation): Promise<RouterEvent>;
  sleep?(milliseconds: number): Promise<void>;
  /** Stop dispatching (Ctrl-C); running invocations are awaited, the run stays resumable. */
  signal?: AbortSignal;
  /** Told the state after each event is applied, before its effects are performed. */
  observe?(state: RunState): void;
}

export async function execute(
  start: RunState,
  firstEvent: RouterEvent,
  deps: ExecutorDeps,
): Promise<RunState> {
  const sleep =
    deps.sleep ?? ((milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds)));
  let state = start;
  let inFlight = 0;
  const pending: RouterEvent[] = [firstEvent];
  let wake: (() => void) | undefined;

  while (pending.length > 0 || inFlight > 0) {
    const event = pending.shift();
    if (!event) {
      // Sleep until an invocation ends; its event lands in `pending`.
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      continue;
    }
    deps.record("router_event", { event });
    const next = transition(state, event);
    state = next.state;
    deps.observe?.(state);
    for (const effect of next.effects) perform(effect);
  }
  return state;

  function perform(effect: RouterEffect) {
    deps.record("router_effect", { effect });
    if (effect.type === "record") {
      deps.record(effect.kind, effect.data);
    } else if (effect.type === "dispatch") {
      if (deps.signal?.aborted) return;
      const { invocation, delayMs } = effect;
      inFlight += 1;
      void (async () => {
        if (delayMs > 0) await sleep(delayMs);
        return deps.dispatch(invocation);
      })()
        .catch(
          (error: unknown): RouterEvent => ({
            type: "agent.failed",
            invocation: invocation.id,
            error: error instanceof Error ? error.message : String(error),
            transient: false,
          }),
        )
        .then((result) => {
          inFlight -= 1;
          pending.push(result);
          wake?.();
        });
    }
  }
}

/** Rebuilds the router's state from the events a ledger recorded. */
export function replay(entries: readonly LedgerEntry[]): RunState {
  let state = initialState();
  for (const entry of entries) {
    if (entry.kind !== "router_event") continue;
    state = transition(state, entry.data.event as RouterEvent).state;
  }
  return state;
}
