import path from "node:path";
import { isHealthy, type PreparedEnvironment, prepareEnvironment } from "../targets/environment.ts";
import type { RunContext } from "./context.ts";
import { onRunEnd } from "./run-end.ts";

// The running target can be swapped within a run: stopped, then started again from another source root
// (a fix branch's worktree) on the same address, so a generated test and the target's suite judge the fixed
// code; and back to the checkout afterwards. Whatever runs when the run ends is stopped with it.

/** Where the run keeps the environment it prepared (set by the run once its environment is up). */
export const TARGET_ENVIRONMENT_KEY = "target:environment";
const SOURCE_KEY = "target:environment-source";

export function currentEnvironment(context: RunContext): PreparedEnvironment | undefined {
  return context.shared.get(TARGET_ENVIRONMENT_KEY) as PreparedEnvironment | undefined;
}

/** Which source root the running target was started from: undefined for the checkout. */
export function runningSource(context: RunContext): string | undefined {
  return context.shared.get(SOURCE_KEY) as string | undefined;
}

/**
 * Stops the running target and starts it from `root` (undefined: the checkout), reset and seeded by the
 * profile's commands. Answers an error message when the target is not managed or does not come up.
 */
export async function swapTarget(
  context: RunContext,
  root: string | undefined,
  log: (message: string) => void,
): Promise<string | undefined> {
  const target = context.target;
  if (!target) return "this run has no target";
  if (target.profile.environment.mode !== "managed") {
    return `target ${target.profile.name} is ${target.profile.environment.mode}, not managed: qaas never restarts it`;
  }
  const running = currentEnvironment(context);
  const original = context.shared.get(`${SOURCE_KEY}:original`) ?? running;
  if (!context.shared.has(`${SOURCE_KEY}:original`)) {
    context.shared.set(`${SOURCE_KEY}:original`, original);
    // The run stops the environment it prepared itself; a swapped-in one is stopped here.
    onRunEnd(context, async () => {
      const last = currentEnvironment(context);
      if (last && last !== original) await last.stop();
    });
  }
  await running?.stop();
  // The server's process can be gone while its port still answers for a moment (a wrapper shell exits
  // first, the server closes its sockets after); starting the next one then finds the port taken.
  await untilDown(target.profile.environment);
  try {
    const next = await prepareEnvironment(root === undefined ? target : { ...target, root }, {
      // A separate pid file per source, so starting one never "cleans up" the other as a leftover.
      home: root === undefined ? context.home : path.join(context.home, "runs", context.runId, "swap"),
      log,
    });
    context.shared.set(TARGET_ENVIRONMENT_KEY, next);
    context.shared.set(SOURCE_KEY, root);
    return undefined;
  } catch (error) {
    context.shared.delete(TARGET_ENVIRONMENT_KEY);
    return error instanceof Error ? error.message : String(error);
  }
}

async function untilDown(
  environment: { base_url?: string | undefined; health_path: string },
  timeoutMs = 10_000,
): Promise<void> {
  if (!environment.base_url) return;
  const url = new URL(environment.health_path, environment.base_url).toString();
  for (let waited = 0; waited < timeoutMs; waited += 200) {
    if (!(await isHealthy(url))) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
