import type { SeatRef } from "../config/agent-schema.ts";
import type { LoadedAgent, LoadedConfig } from "../config/load-config.ts";
import { buildAgentOptions } from "../registry/build-agent-options.ts";
import type { AgentOutcome, Invocation, Review, RouterEvent, Verdict } from "../router/run-state.ts";
import type { InvocationBudget, SpendMeter } from "../run/spend-meter.ts";
import { BuiltinSeat } from "../seats/builtin-seat.ts";
import { BudgetStopError } from "../seats/call-budget.ts";
import { GatedSeat } from "../seats/gated-seat.ts";
import { type SeatRequest, TransientSeatError, type WorkerSeat } from "../seats/seat.ts";
import type { RunContext, ToolContext } from "../tools/context.ts";
import { invokeTool } from "../tools/invoke-tool.ts";
import type { ToolResult } from "../tools/result.ts";
import { closeAgentServices } from "../tools/run-end.ts";
import { heldNotice, MustCallHook } from "./hooks.ts";

// Runs ONE agent invocation on its seat, in its own context, and answers the event the router needs.
// Every tool call goes through invokeTool (guardrails + ledger); the seat never reaches around it.

export interface RunnerRuntime {
  mode: string;
  config: LoadedConfig;
  context: RunContext;
  /** The seat for an agent: a `--seat` override, the agent's own, or the system's worker seat. */
  seatFor(agent: LoadedAgent): { seat: WorkerSeat; ref: SeatRef };
  /** Tickets filed so far in this run (the cap is per run). */
  tickets: { filed: number };
  log(message: string): void;
  /** The live budget every model call is checked against; without it calls are not capped one by one. */
  meter?: SpendMeter;
}

const BRANCH_TOOLS = new Set(["create_branch", "commit", "push", "open_pull_request"]);

export async function runInvocation(invocation: Invocation, runtime: RunnerRuntime): Promise<RouterEvent> {
  const { context } = runtime;
  const loaded = runtime.config.agents.get(invocation.agent);
  if (!loaded) {
    return {
      type: "agent.failed",
      invocation: invocation.id,
      error: `no agent ${invocation.agent} in the config`,
      transient: false,
    };
  }
  let seat: WorkerSeat;
  let ref: SeatRef;
  try {
    ({ seat, ref } = runtime.seatFor(loaded));
  } catch (error) {
    return { type: "agent.failed", invocation: invocation.id, error: messageOf(error), transient: false };
  }
  seat = behindGate(loaded, seat);
  if (seat.backend === "builtin" && !loaded.playbookFile) {
    return {
      type: "agent.skipped",
      invocation: invocation.id,
      reason: `${loaded.config.name} has no builtin playbook; give it a model seat (--seat) to run it`,
    };
  }

  const finding = invocation.input.finding_id
    ? context.readEnvelopes().find((envelope) => envelope.id === invocation.input.finding_id)
    : undefined;
  const options = buildAgentOptions(loaded, {
    runId: context.runId,
    mode: runtime.mode,
    invocation: invocation.id,
    input: invocation.input,
    target: context.target,
    finding,
  });
  const taskArtifact = context.putArtifact(
    `tasks/${invocation.id}-attempt${invocation.attempt}.md`,
    options.task,
  );
  context.record(
    "agent_started",
    {
      agent: loaded.config.name,
      invocation: invocation.id,
      attempt: invocation.attempt,
      phase: invocation.phase,
      seat: ref.backend,
      model: seat.model,
      task_artifact: taskArtifact,
      input: { ...invocation.input },
      tools: options.tools.map((tool) => tool.name),
      unavailable_tools: options.unavailableTools,
    },
    loaded.config.name,
  );
  runtime.log(
    `${invocation.phase}: ${loaded.config.name} started (${ref.backend}${seat.model ? ` ${seat.model}` : ""})`,
  );

  const collected = collectOutcome(invocation.id);
  const toolContext: ToolContext = {
    ...context,
    record: (kind, data, agent) => {
      const entry = context.record(kind, { ...data, invocation: invocation.id }, agent ?? loaded.config.name);
      collected.observe(entry.kind, entry.data);
      return entry;
    },
    agent: loaded.config,
    invocation: invocation.id,
    guard: {
      ticketsFiled: runtime.tickets.filed,
      filesChanged: new Map(),
      ...(finding?.reproduction.test?.path ? { immutableTest: finding.reproduction.test.path } : {}),
    },
  };
  const mustCall = new MustCallHook(options.mustCall, (data) =>
    toolContext.record("hook_fired", { hook: "must_call", ...data }, loaded.config.name),
  );
  let capEscalated = false;
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  context.signal.addEventListener("abort", onAbort, { once: true });
  const budget = runtime.meter?.forInvocation(loaded.config.name);

  const request: SeatRequest = {
    agent: loaded.config.name,
    system: options.system,
    task: options.task,
    taskData: options.taskData,
    tools: options.tools,
    maxTurns: options.maxTurns,
    ...(options.playbook ? { playbook: options.playbook } : {}),
    async callTool(name, input): Promise<ToolResult> {
      const result = await invokeTool(name, input, toolContext, invocation.id);
      runtime.tickets.filed = toolContext.guard.ticketsFiled;
      if (
        !result.ok &&
        (result.details as { rule?: string } | undefined)?.rule === "ticket-cap" &&
        !capEscalated
      ) {
        // Over the run's ticket cap the filing stops and a person decides what else deserves a ticket.
        capEscalated = true;
        toolContext.record("escalation", {
          agent: loaded.config.name,
          reason: `ticket cap reached: ${result.error}`,
        });
      }
      if (result.ok) {
        mustCall.called(name);
        if (BRANCH_TOOLS.has(name)) collected.branch(input);
      }
      return heldNotice(name, result);
    },
    checkStop: () => mustCall.check(),
    log: (message) => runtime.log(`${invocation.phase}: ${loaded.config.name}: ${message}`),
    signal: controller.signal,
    ...(budget === undefined ? {} : { budget }),
  };

  try {
    const result = await seat.run(request);
    const tokens = result.usage.inputTokens + result.usage.outputTokens;
    budget?.reconcile({ usd: result.costUsd, tokens });
    context.record(
      "agent_finished",
      {
        agent: loaded.config.name,
        invocation: invocation.id,
        outcome: result.outcome,
        turns: result.turns,
        cost_usd: result.costUsd,
        tokens,
        warnings: result.warnings.map((warning) => warning.message),
      },
      loaded.config.name,
    );
    const outcome: AgentOutcome = {
      outcome: result.outcome,
      costUsd: result.costUsd,
      tokens,
      ...collected.result(),
    };
    runtime.log(
      `${invocation.phase}: ${loaded.config.name} ${result.outcome} — ${outcome.findings.length} finding(s), ${result.turns} turn(s), $${result.costUsd.toFixed(4)}`,
    );
    return { type: "agent.done", invocation: invocation.id, result: outcome };
  } catch (error) {
    if (error instanceof BudgetStopError && budget !== undefined) {
      return stoppedAtBudget(error, budget, { invocation, agent: loaded.config.name, runtime, collected });
    }
    const transient = error instanceof TransientSeatError;
    // A failed call still cost what the meter counted for it (the server's usage or an estimate).
    const spent = budget?.spent() ?? { usd: 0, tokens: 0 };
    context.record(
      "agent_failed",
      {
        agent: loaded.config.name,
        invocation: invocation.id,
        attempt: invocation.attempt,
        error: messageOf(error),
        transient,
        cost_usd: spent.usd,
        tokens: spent.tokens,
      },
      loaded.config.name,
    );
    runtime.log(
      `${invocation.phase}: ${loaded.config.name} failed${transient ? " (transient)" : ""}: ${messageOf(error)}`,
    );
    return {
      type: "agent.failed",
      invocation: invocation.id,
      error: messageOf(error),
      transient,
      costUsd: spent.usd,
      tokens: spent.tokens,
    };
  } finally {
    context.signal.removeEventListener("abort", onAbort);
    await closeAgentServices(toolContext);
  }
}

/** A model seat of an agent with a gate reads only what its builtin playbook let through. */
export function behindGate(loaded: LoadedAgent, seat: WorkerSeat): WorkerSeat {
  const { gate } = loaded.config;
  if (!gate || seat.backend === "builtin" || !loaded.playbookFile) return seat;
  return new GatedSeat(new BuiltinSeat(), seat, gate);
}

/**
 * The seat refused a model call that could cross a cap. What the agent found before stands; the ledger
 * says which cap, how much was spent and what the refused call could have cost, and the router is told
 * the scope so a run cap ends the run and an agent cap stops that agent.
 */
function stoppedAtBudget(
  error: BudgetStopError,
  budget: InvocationBudget,
  parts: {
    invocation: Invocation;
    agent: string;
    runtime: RunnerRuntime;
    collected: ReturnType<typeof collectOutcome>;
  },
): RouterEvent {
  const { invocation, agent, runtime, collected } = parts;
  const spent = budget.spent();
  const { stop } = error;
  runtime.context.record(
    "budget_exceeded",
    {
      scope: stop.scope,
      agent,
      invocation: invocation.id,
      reason: "model_call_refused",
      unit: stop.unit,
      cap: stop.cap,
      spent: stop.spent,
      refused_call_worst_case: stop.worstCase,
      message: error.message,
    },
    agent,
  );
  runtime.context.record(
    "agent_finished",
    {
      agent,
      invocation: invocation.id,
      outcome: "over_budget",
      turns: 0,
      cost_usd: spent.usd,
      tokens: spent.tokens,
      warnings: [],
    },
    agent,
  );
  runtime.log(`${invocation.phase}: ${agent} stopped at its budget: ${error.message}`);
  return {
    type: "agent.done",
    invocation: invocation.id,
    result: {
      outcome: "stopped",
      costUsd: spent.usd,
      tokens: spent.tokens,
      budgetStop: stop.scope,
      ...collected.result(),
    },
  };
}

/**
 * Findings whose replay is slow: a timing measured, a channel waited on, a browser driven (a page's findings
 * replay through a browser test, three runs of it). The router starts their reproduction first, so that the
 * phase does not end on a few of them started last.
 */
export function replaysSlowly(domain: unknown): boolean {
  return typeof domain === "string" && ["performance", "realtime", "ui", "usability"].includes(domain);
}

/** Reads what an invocation produced from the ledger entries it wrote, as they are written. */
function collectOutcome(invocation: string) {
  const findings: AgentOutcome["findings"] = [];
  const ticketsFiled: NonNullable<AgentOutcome["ticketsFiled"]> = [];
  let verdict: Verdict | undefined;
  let review: Review | undefined;
  let branch: string | undefined;
  return {
    observe(kind: string, data: Record<string, unknown>) {
      if (data.invocation !== invocation) return;
      if (kind === "envelope_emitted") {
        const slow = replaysSlowly(data.domain);
        findings.push({
          id: String(data.envelope_id),
          fileable: data.fileable === true,
          ...(slow ? { slow } : {}),
        });
      } else if (kind === "finding_reproduced") {
        // Reproduction decides fileability: the router replaces what discovery said about this finding.
        findings.push({ id: String(data.finding_id), fileable: data.fileable === true });
      } else if (kind === "verdict_recorded") {
        verdict = data.verdict as Verdict;
      } else if (kind === "review_recorded") {
        review = data.decision as Review;
      } else if (kind === "ticket_filed") {
        ticketsFiled.push({
          key: String(data.key),
          ...(data.finding_id ? { findingId: String(data.finding_id) } : {}),
        });
      }
    },
    branch(input: unknown) {
      const value = (input as { branch?: unknown; name?: unknown } | null) ?? {};
      const name =
        typeof value.branch === "string"
          ? value.branch
          : typeof value.name === "string"
            ? value.name
            : undefined;
      if (name) branch = name;
    },
    result(): Omit<AgentOutcome, "outcome" | "costUsd" | "tokens"> {
      return {
        findings,
        ...(ticketsFiled.length > 0 ? { ticketsFiled } : {}),
        ...(verdict ? { verdict } : {}),
        ...(review ? { review } : {}),
        ...(branch ? { branch } : {}),
      };
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
