import type { TargetProfile } from "../../targets/profile-schema.ts";
import type { RunContext, ToolContext } from "../../tools/context.ts";
import { accountGuard } from "./account-guard.ts";
import { type Limiter, sharedLimiter } from "./concurrency.ts";
import { reportTargetDeath } from "./crash-finding.ts";
import { HttpClient, RequestBudget } from "./http-client.ts";
import { TargetLiveness } from "./liveness.ts";
import { forbiddenRequests, profileEndpoints } from "./profile-endpoints.ts";
import { quietWindowsOf } from "./quiet-window.ts";

const DEFAULT_CONCURRENCY = 8;
const DEFAULT_MAX_REQUESTS = 12000;

export interface ProbeTarget {
  baseUrl: string;
  profile: TargetProfile | undefined;
  mode: TargetProfile["environment"]["mode"] | "unknown";
  /** False for `external` targets unless the profile sets `allow_writes`. */
  writesAllowed: boolean;
}

/** Where the live target is and what may be sent to it; a string says why it cannot be reached. */
export function probeTargetOf(context: ToolContext): ProbeTarget | string {
  const profile = context.target?.profile;
  const mode = profile?.environment.mode ?? "unknown";
  if (mode === "none")
    return "the target profile's environment.mode is none: there is no live target to probe";
  const baseUrl = profile?.environment.base_url ?? context.systemMap()?.base_url ?? undefined;
  if (!baseUrl) {
    return "no base URL: set environment.base_url in the target profile (or let MAPPER record one in the system map)";
  }
  const writesAllowed = !(mode === "external" && profile?.environment.allow_writes !== true);
  return { baseUrl, profile, mode, writesAllowed };
}

/** Where a run keeps its concurrency cap on the target's requests. */
export const RUN_LIMITER_KEY = "http:limiter";

/** The run-wide concurrency cap: one limiter shared by every agent and tool of the run. */
export function runLimiter(context: ToolContext): Limiter {
  return sharedLimiter(context.shared, RUN_LIMITER_KEY, targetConcurrency(context.target?.profile));
}

/** Requests in flight to the target at most (profile.budgets.concurrency). */
export function targetConcurrency(profile: TargetProfile | undefined): number {
  return profile?.budgets?.concurrency ?? DEFAULT_CONCURRENCY;
}

/** Where the run keeps what restarts a managed target (set by the run once its environment is up). */
export const TARGET_RESTART_KEY = "target:restart";

/** The run-wide watch over the target's liveness (created on first use); see liveness.ts. */
export function targetLiveness(context: ToolContext, target: ProbeTarget): TargetLiveness {
  const key = `http:liveness:${new URL(target.baseUrl).origin}`;
  let liveness = context.shared.get(key) as TargetLiveness | undefined;
  if (!liveness) {
    const restart = context.shared.get(TARGET_RESTART_KEY) as (() => Promise<void>) | undefined;
    liveness = new TargetLiveness({
      baseUrl: target.baseUrl,
      healthUrl: new URL(target.profile?.environment.health_path ?? "/", target.baseUrl).toString(),
      restart: target.mode === "managed" ? restart : undefined,
    });
    context.shared.set(key, liveness);
  }
  return liveness;
}

/**
 * The operations a tool's default request budget is sized for. A larger map gets a proportionally larger
 * default (up to four times), so that a probe reaches the last operation of a big application too rather
 * than spending its budget on the first hundred; a budget the caller or the profile names is kept as is.
 */
const BUDGET_REFERENCE_OPERATIONS = 100;
const MAX_BUDGET_SCALE = 4;

/** A default request budget sized to the map's surface (see BUDGET_REFERENCE_OPERATIONS). */
export function surfaceBudget(context: Pick<RunContext, "systemMap">, base: number): number {
  const operations = context.systemMap()?.operations.length ?? 0;
  const scale = Math.min(MAX_BUDGET_SCALE, Math.max(1, operations / BUDGET_REFERENCE_OPERATIONS));
  return Math.round(base * scale);
}

/** The agent's request budget (profile.budgets.max_requests_per_agent), shared by all its tool calls. */
export function agentBudget(context: ToolContext): RequestBudget {
  return runAgentBudget(context, context.agent.name);
}

/**
 * The budget of one agent in the run, every invocation of it drawing on it; a queue worker takes it
 * before the agent starts, to carry what the agent spent on other workers (src/queue/shared-spend.ts).
 */
export function runAgentBudget(context: RunContext, agent: string): RequestBudget {
  const key = `http:budget:${agent}`;
  let budget = context.shared.get(key) as RequestBudget | undefined;
  if (!budget) {
    budget = new RequestBudget(
      context.target?.profile.budgets?.max_requests_per_agent ?? surfaceBudget(context, DEFAULT_MAX_REQUESTS),
    );
    context.shared.set(key, budget);
  }
  return budget;
}

/**
 * A client for one tool call: its own cap (`maxRequests`, never above what the agent has left) charged to
 * the agent's budget, the run's concurrency cap, and the target's write policy.
 */
export function openHttpClient(
  context: ToolContext,
  target: ProbeTarget,
  options: { maxRequests?: number; timeoutMs?: number } = {},
): HttpClient {
  const parent = agentBudget(context);
  const budget = new RequestBudget(options.maxRequests ?? parent.max, parent);
  return new HttpClient({
    refuse: forbiddenRequests(target.profile),
    guardAccount: accountGuard(target.profile, context.systemMap()?.operations),
    allowSignOut: profileEndpoints(target.profile?.auth?.allow_sign_out),
    limiter: runLimiter(context),
    budget,
    writesAllowed: target.writesAllowed,
    timeoutMs: options.timeoutMs,
    signal: context.signal,
    liveness: targetLiveness(context, target),
    reportDeath: (death, liveness) => reportTargetDeath(context, target.baseUrl, death, liveness),
    quiet: quietWindowsOf(context),
  });
}
