import type { ToolContext } from "./context.ts";

// Work a run does once for every agent that asks (one reset before a phase's tests): the first caller does
// it, the others wait and share its answer. In one process a promise kept in the run's shared map is
// enough; a queue worker puts a `RunOnce` there that agrees through the queue's database instead, since
// the run's agents are spread over processes and machines.

export const RUN_ONCE_KEY = "run:once";

export type RunOnce = <T>(
  key: string,
  work: () => Promise<T>,
  options: { staleAfterMs: number },
) => Promise<T>;

export function runOnce<T>(
  context: ToolContext,
  key: string,
  work: () => Promise<T>,
  options: { staleAfterMs: number },
): Promise<T> {
  const shared = context.shared.get(RUN_ONCE_KEY) as RunOnce | undefined;
  if (shared) return shared(key, work, options);
  const local = `${RUN_ONCE_KEY}:${key}`;
  let pending = context.shared.get(local) as Promise<T> | undefined;
  if (!pending) {
    pending = work();
    context.shared.set(local, pending);
  }
  return pending;
}
