import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation, SystemMap } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import type { ToolResult } from "../../tools/result.ts";
import { err, ok } from "../../tools/result.ts";
import type { HttpClient } from "../http/http-client.ts";
import { BudgetExhaustedError, WriteNotAllowedError } from "../http/http-client.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import type { Masker } from "../http/masking.ts";
import { quietWindowsOf } from "../http/quiet-window.ts";
import type { ProbeTarget } from "../http/run-http.ts";
import { openHttpClient, probeTargetOf } from "../http/run-http.ts";
import { slowOperationsFor } from "../http/slow-operations.ts";
import { byPrivilege } from "./roles.ts";
import type { FormFields, FormSubmission, SendFormOptions } from "./send-form.ts";
import { sendForm } from "./send-form.ts";
import type { SendOptions, SessionPool } from "./session-pool.ts";
import { sessionPoolFor } from "./session-pool.ts";
import type { ProfileUser } from "./sign-in.ts";

/** Everything one probe tool call works with: the target, its map, a budgeted client and the sessions. */
export interface ProbeRun {
  tool: string;
  context: ToolContext;
  target: ProbeTarget;
  map: SystemMap;
  client: HttpClient;
  sessions: SessionPool;
  masker: Masker;
  /** Sign-in failures, by user, already explained (user and step). */
  signInErrors: Record<string, string>;
  notes: string[];
}

export interface ProbeLimits {
  max_requests?: number;
  timeout_ms?: number;
}

/** Opens a probe run, or answers why it cannot (no live target, no map). */
export function openProbeRun(
  context: ToolContext,
  tool: string,
  limits: ProbeLimits = {},
): ProbeRun | string {
  const target = probeTargetOf(context);
  if (typeof target === "string") return target;
  const map = context.systemMap();
  if (!map) return "no system map is pinned for this run yet: MAPPER runs first (get_system_map answers it)";
  const client = openHttpClient(context, target, {
    maxRequests: limits.max_requests,
    timeoutMs: limits.timeout_ms,
  });
  const sessions = sessionPoolFor(context, target.baseUrl);
  return {
    tool,
    context,
    target,
    map,
    client,
    sessions,
    masker: sessions.masker,
    signInErrors: {},
    notes: [],
  };
}

/**
 * Sends as `user` (undefined: anonymous). Requests the run may not send (a refused write, an excluded
 * operation, a sign-out) answer undefined, as does a user who cannot sign in (the reason is kept).
 */
export async function send(
  run: ProbeRun,
  user: string | undefined,
  spec: HttpRequestSpec,
  options: SendOptions = {},
): Promise<HttpExchange | undefined> {
  return notSentAsUndefined(run, user, () => run.sessions.send(run.client, user, spec, options));
}

/**
 * Submits a form operation as a browser would (its page loaded first for a fresh CSRF token, redirects
 * followed); undefined when it may not be sent, like `send`.
 */
export async function submitForm(
  run: ProbeRun,
  user: string | undefined,
  operation: Operation,
  fields: FormFields,
  options: SendFormOptions = {},
): Promise<FormSubmission | undefined> {
  return notSentAsUndefined(run, user, () =>
    sendForm(run.sessions, run.client, user, operation, fields, options),
  );
}

async function notSentAsUndefined<Result>(
  run: ProbeRun,
  user: string | undefined,
  body: () => Promise<Result>,
): Promise<Result | undefined> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof WriteNotAllowedError) return undefined;
    if (error instanceof BudgetExhaustedError) throw error;
    if (user !== undefined && error instanceof Error && error.name === "QaasError") {
      run.signInErrors[user] = error.message;
      return undefined;
    }
    throw error;
  }
}

/**
 * Users who can sign in, least privileged first; each failure is kept (user and step) for the stats. With
 * `peers`, a role the profile gives one usable user gets a throw-away second one when sign-up allows it.
 */
export async function usableUsers(run: ProbeRun, options: { peers?: boolean } = {}): Promise<ProfileUser[]> {
  const users = byPrivilege([
    ...run.sessions.users(),
    ...(options.peers ? run.sessions.throwawayUsers() : []),
  ]);
  const usable: ProfileUser[] = [];
  await Promise.all(
    users.map(async (user) => {
      try {
        await run.sessions.signIn(user.name, run.client);
        usable.push(user);
      } catch (error) {
        if (error instanceof BudgetExhaustedError) return;
        run.signInErrors[user.name] = error instanceof Error ? error.message : String(error);
      }
    }),
  );
  if (options.peers) {
    for (const user of [...usable]) {
      const alone = !usable.some(
        (other) => other !== user && other.role.toLowerCase() === user.role.toLowerCase(),
      );
      if (!alone) continue;
      try {
        const peer = await run.sessions.peerOf(user.name, run.client);
        if (peer && !usable.includes(peer)) usable.push(peer);
      } catch (error) {
        if (error instanceof BudgetExhaustedError) break;
        run.signInErrors[`throwaway:${user.role}`] = error instanceof Error ? error.message : String(error);
      }
    }
  }
  return byPrivilege(usable);
}

/** Stats every probe answers, whatever else it adds. */
export function baseStats(run: ProbeRun, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    requests: run.client.stats.sent,
    failed_requests: run.client.stats.failed,
    skipped_writes: run.client.stats.skipped_writes,
    refused_sign_outs: run.client.stats.refused_sign_outs,
    by_status: run.client.stats.by_status,
    writes_allowed: run.target.writesAllowed,
    budget_left: run.client.remaining(),
    sign_in_errors: run.signInErrors,
    slow_operations: slowOperationsFor(run.context).report(),
    measurement_windows: quietWindowsOf(run.context).report(),
    notes: run.notes,
    ...extra,
  };
}

/** Runs a probe body; a spent budget ends it quietly with what it found so far. */
export async function untilBudget(run: ProbeRun, body: () => Promise<void>): Promise<boolean> {
  try {
    await body();
    return false;
  } catch (error) {
    if (error instanceof BudgetExhaustedError) {
      run.notes.push(`stopped early: ${error.message}`);
      return true;
    }
    throw error;
  }
}

export interface ProbeOutcome {
  candidates: EnvelopeDraft[];
  stats: Record<string, unknown>;
}

/**
 * The shape every composite probe tool shares: open the run (or answer why not), run the probe, and answer
 * `{ candidates, stats }` with the request counts of this call. Unexpected failures become `err`, never throws.
 */
export async function runProbeTool(
  context: ToolContext,
  tool: string,
  limits: ProbeLimits,
  probe: (run: ProbeRun) => Promise<ProbeOutcome>,
): Promise<ToolResult> {
  const run = openProbeRun(context, tool, limits);
  if (typeof run === "string") return err(`${tool}: ${run}`);
  try {
    const started = performance.now();
    const outcome = await probe(run);
    const seconds = (performance.now() - started) / 1000;
    return ok({
      candidates: outcome.candidates,
      stats: {
        ...outcome.stats,
        ...baseStats(run),
        candidates: outcome.candidates.length,
        seconds: Math.round(seconds * 100) / 100,
        requests_per_second: seconds > 0 ? Math.round(run.client.stats.sent / seconds) : 0,
      },
    });
  } catch (error) {
    return err(`${tool} failed: ${error instanceof Error ? error.message : String(error)}`, {
      stats: baseStats(run),
    });
  }
}

/** What composite probes declare to the guardrails: a read of the target's base URL (they police writes themselves). */
export function probeActions(
  context: ToolContext,
): Array<{ kind: "http_request"; method: string; url: string }> {
  const target = probeTargetOf(context);
  return typeof target === "string" ? [] : [{ kind: "http_request", method: "GET", url: target.baseUrl }];
}
