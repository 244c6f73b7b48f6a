import type { RunContext } from "./context.ts";

// Services a tool opens for the whole run (a browser, a listener) are closed when the run ends, whether it
// finished, failed or was stopped: whoever opens one registers its closing here, and the run calls them all.

const CLOSERS_KEY = "run:closers";

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
