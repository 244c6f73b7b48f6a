import { z } from "zod";
import { isHealthy, runCommand } from "../../targets/environment.ts";
import type { ToolContext } from "../context.ts";
import { currentEnvironment, runningSource, swapTarget } from "../environment-swap.ts";
import { err, ok, type ToolResult } from "../result.ts";
import { runOnce } from "../run-once.ts";
import { defineTool } from "../tool.ts";
import { checkOut, openWorkspace } from "../vcs/worktrees.ts";

// env_control: reset, seed, and swap the running target through the profile's own commands. Only a
// `managed` target is ever reset or restarted; an `external` one belongs to someone else and is only read.

type Step = "reset" | "seed";

function managed(context: ToolContext): string | undefined {
  const environment = context.target?.profile.environment;
  if (!environment) return "this run has no target";
  if (environment.mode !== "managed") {
    return `target ${context.target?.profile.name} is ${environment.mode}, not managed: qaas does not reset or restart it`;
  }
  return undefined;
}

async function health(context: ToolContext): Promise<boolean> {
  const environment = context.target?.profile.environment;
  if (!environment?.base_url) return false;
  return isHealthy(new URL(environment.health_path, environment.base_url).toString());
}

async function runStep(step: Step, context: ToolContext): Promise<ToolResult> {
  const refused = managed(context);
  if (refused) return err(refused);
  const command = context.target?.profile.environment[step];
  if (!command) return err(`the target profile has no environment.${step} command`);
  const cwd = runningSource(context) ?? context.target?.root;
  if (cwd === undefined) return err("this target has no source root to run its commands in");
  const started = Date.now();
  try {
    await runCommand(command.command, cwd, command.env, command.timeout_seconds ?? 60);
  } catch (error) {
    return err(`${step} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return ok({ step, duration_ms: Date.now() - started, healthy: await health(context) });
}

const commandOf = (step: Step) => (_input: unknown, context: ToolContext) => [
  { kind: "shell" as const, command: context.target?.profile.environment[step]?.command ?? "" },
];

const reset = defineTool({
  name: "reset",
  server: "env_control",
  description:
    "Reset the managed target's data with the profile's environment.reset command. Answers whether it is healthy after. With `once` (a key such as a phase name), only the first call of the run with that key resets; the others wait for it and share its answer.",
  input: z.strictObject({ once: z.string().min(1).max(100).optional() }),
  actions: commandOf("reset"),
  run(input, context) {
    if (input.once === undefined) return runStep("reset", context);
    // Agents of one phase run side by side, perhaps on several workers: one reset serves them all, and
    // none starts before it is done (a second reset would pull the data from under another's test).
    const timeoutSeconds = context.target?.profile.environment.reset?.timeout_seconds ?? 60;
    return runOnce(context, `env_control:reset:${input.once}`, () => runStep("reset", context), {
      staleAfterMs: (timeoutSeconds + 30) * 1000,
    });
  },
});

const seed = defineTool({
  name: "seed",
  server: "env_control",
  description: "Seed the managed target with the profile's environment.seed command.",
  input: z.strictObject({}),
  actions: commandOf("seed"),
  run: (_input, context) => runStep("seed", context),
});

const startCommand = (_input: unknown, context: ToolContext) => [
  { kind: "shell" as const, command: context.target?.profile.environment.start?.command ?? "" },
];

const spinUp = defineTool({
  name: "spin_up",
  server: "env_control",
  description:
    "Restart the managed target, reset and seeded, from the worktree of `branch` (one this run opened with create_branch), or from the checkout when no branch is given. Same address as before.",
  input: z.strictObject({ branch: z.string().optional() }),
  actions: startCommand,
  async run(input, context) {
    const refused = managed(context);
    if (refused) return err(refused);
    let root: string | undefined;
    if (input.branch !== undefined) {
      const workspace = openWorkspace(context, input.branch);
      if (!workspace)
        return err(`no worktree is open for ${input.branch} in this run; create_branch opens one`);
      await checkOut(context, workspace);
      root = workspace.root;
    }
    const started = Date.now();
    const failure = await swapTarget(context, root, () => {});
    if (failure)
      return err(`the target did not start${input.branch ? ` from ${input.branch}` : ""}: ${failure}`);
    return ok({
      branch: input.branch ?? null,
      duration_ms: Date.now() - started,
      healthy: await health(context),
    });
  },
});

const tearDown = defineTool({
  name: "tear_down",
  server: "env_control",
  description: "Stop a target started from a branch and bring the checkout's target back, reset and seeded.",
  input: z.strictObject({}),
  actions: startCommand,
  async run(_input, context) {
    const refused = managed(context);
    if (refused) return err(refused);
    // A spin_up that failed to start its branch leaves nothing running: the checkout's target comes back too.
    if (runningSource(context) === undefined && currentEnvironment(context) !== undefined) {
      return ok({ restored: false, healthy: await health(context) });
    }
    const failure = await swapTarget(context, undefined, () => {});
    if (failure) return err(`the checkout's target did not come back: ${failure}`);
    return ok({ restored: true, healthy: await health(context) });
  },
});

export const envControlTools = [reset, seed, spinUp, tearDown];
