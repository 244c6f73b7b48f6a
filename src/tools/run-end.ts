import type { RunContext, ToolContext } from "./context.ts";

// Services a tool opens for the whole run (a browser, a listener) are closed when the run ends, whether it
// finished, failed or was stopped: whoever opens one registers its closing here, and the run calls them all.
// What a tool holds for one agent invocation (a tab, a hold on a shared service) is released when that
// invocation ends, so one agent finishing never takes down what another is still using.

const CLOSERS_KEY = "run:closers";
const AGENT_CLOSERS_KEY = "run:agent-closers";

type Closer = () => Promise<void> | void;

function closersOf(context: RunContext): Closer[] {
  let closers = context.shared.get(CLOSERS_KEY) as Closer[] | undefined;
  if (!closers) {
    closers = [];
    context.shared.set(CLOSERS_KEY, closers);
  }
  return closers;
}

/** Registers `close` to run when the run ends. */
export function onRunEnd(context: RunContext, close: Closer): void {
  closersOf(context).push(close);
}

/** Runs every registered closer once, newest first; one that fails does not keep the others from running. */
export async function closeRunServices(context: RunContext): Promise<void> {
  const closers = closersOf(context).splice(0).reverse();
  for (const close of closers) {
    try {
      await close();
    } catch {
      // Closing is best effort: the run's outcome is already recorded.
    }
  }
}

function agentClosersOf(context: RunContext): Map<string, Closer[]> {
  let closers = context.shared.get(AGENT_CLOSERS_KEY) as Map<string, Closer[]> | undefined;
  if (!closers) {
    closers = new Map();
    context.shared.set(AGENT_CLOSERS_KEY, closers);
  }
  return closers;
}

/**
 * Registers `release` to run when the invocation `context` serves ends. A context outside an invocation (a
 * test, an MCP call, an exploration) has none: what it holds is released when the run ends.
 */
export function onAgentEnd(context: ToolContext, release: Closer): boolean {
  if (context.invocation === undefined) return false;
  const closers = agentClosersOf(context);
  const list = closers.get(context.invocation) ?? [];
  list.push(release);
  closers.set(context.invocation, list);
  return true;
}

/** Runs the releases registered for the invocation `context` serves, newest first, each once. */
export async function closeAgentServices(context: ToolContext): Promise<void> {
  if (context.invocation === undefined) return;
  const closers = agentClosersOf(context);
  const list = closers.get(context.invocation) ?? [];
  closers.delete(context.invocation);
  for (const release of list.reverse()) {
    try {
      await release();
    } catch {
      // Best effort, as at the run's end: the agent's outcome is already recorded.
    }
  }
}
