import { PHASES, type Phase } from "../config/agent-schema.ts";
import type {
  AgentOutcome,
  AgentPlan,
  DispatchInput,
  Invocation,
  RouterEffect,
  RouterEvent,
  RunState,
  TicketLoop,
} from "./run-state.ts";

// The router: a pure function from (state, event) to (next state, effects). It performs nothing; the
// executor runs the effects and feeds their results back as events. Phase order, concurrency, retries,
// dead-letter, the budget and the verify loop all live here, as ordinary code a test can step through.

export interface Transition {
  state: RunState;
  effects: RouterEffect[];
}

export function transition(previous: RunState, event: RouterEvent): Transition {
  const state = structuredClone(previous);
  const effects: RouterEffect[] = [];
  if (state.status === "done" || state.status === "stopped") return { state, effects };

  switch (event.type) {
    case "run.start":
      state.plan = event.plan;
      state.status = "active";
      state.tickets = event.plan.tickets.map((ticket) => newTicketLoop(ticket.key, ticket.findingId));
      break;
    case "run.resume":
      // Whatever was running when the process died runs again, as a fresh invocation of the same work.
      for (const invocation of Object.values(state.running)) {
        const again = { ...invocation, attempt: invocation.attempt + 1 };
        state.running[invocation.id] = again;
        effects.push({
          type: "record",
          kind: "agent_retried",
          data: retriedData(again, "resumed after interruption"),
        });
        effects.push({ type: "dispatch", invocation: again, delayMs: 0 });
      }
      break;
    case "agent.done":
      onAgentDone(state, effects, event.invocation, event.result);
      break;
    case "agent.failed":
      onAgentFailed(state, effects, event);
      break;
    case "agent.skipped": {
      const invocation = takeRunning(state, event.invocation);
      if (invocation) {
        state.ended[invocation.id] = "skipped";
        effects.push({
          type: "record",
          kind: "agent_skipped",
          data: { agent: invocation.agent, invocation: invocation.id, reason: event.reason },
        });
        if (invocation.phase === "verify")
          escalate(state, effects, invocation, `${invocation.agent} was skipped: ${event.reason}`);
      }
      break;
    }
  }

  advance(state, effects);
  return { state, effects };
}

function onAgentDone(state: RunState, effects: RouterEffect[], id: string, result: AgentOutcome): void {
  const invocation = takeRunning(state, id);
  if (!invocation) return;
  state.ended[id] = "completed";
  addSpend(state, invocation.agent, result.costUsd, result.tokens);
  for (const finding of result.findings) {
    const known = state.findings.find((candidate) => candidate.id === finding.id);
    if (!known) state.findings.push(finding);
    // A later word on a known finding (REPRODUCER's outcome) replaces its fileability.
    else if (invocation.phase !== "discover") known.fileable = finding.fileable;
  }
  for (const ticket of result.ticketsFiled ?? []) {
    if (hasVerifyLoop(state) && !state.tickets.some((loop) => loop.ticket === ticket.key)) {
      state.tickets.push(newTicketLoop(ticket.key, ticket.findingId));
    }
  }
  if (result.budgetStop === "agent" && !state.agentsOverBudget?.includes(invocation.agent))
    state.agentsOverBudget = [...(state.agentsOverBudget ?? []), invocation.agent];
  if (invocation.phase === "verify") stepVerifyLoop(state, effects, invocation, result);
  checkRunBudget(state, effects, result.budgetStop === "run");
}

function onAgentFailed(
  state: RunState,
  effects: RouterEffect[],
  event: Extract<RouterEvent, { type: "agent.failed" }>,
) {
  const invocation = takeRunning(state, event.invocation);
  if (!invocation) return;
  addSpend(state, invocation.agent, event.costUsd ?? 0, event.tokens ?? 0);
  if (event.transient && invocation.attempt < state.plan.retries.attempts && !state.budgetExceeded) {
    const again: Invocation = { ...invocation, attempt: invocation.attempt + 1 };
    state.running[again.id] = again;
    const delayMs = state.plan.retries.backoffMs * 2 ** invocation.attempt;
    effects.push({
      type: "record",
      kind: "agent_retried",
      data: { ...retriedData(again, event.error), delay_ms: delayMs },
    });
    effects.push({ type: "dispatch", invocation: again, delayMs });
    return;
  }
  state.ended[invocation.id] = "dead_lettered";
  effects.push({
    type: "record",
    kind: "agent_dead_lettered",
    data: {
      agent: invocation.agent,
      invocation: invocation.id,
      attempts: invocation.attempt + 1,
      error: event.error,
    },
  });
  if (invocation.phase === "verify")
    escalate(state, effects, invocation, `${invocation.agent} failed: ${event.error}`);
  checkRunBudget(state, effects);
}

/** The bounded loop of SPEC §3: VERIFIER ⇄ FIXER ⇄ REVIEWER, one ticket at a time through its stages. */
function stepVerifyLoop(
  state: RunState,
  effects: RouterEffect[],
  invocation: Invocation,
  result: AgentOutcome,
) {
  const loop = state.tickets.find((candidate) => candidate.ticket === invocation.input.ticket);
  if (!loop) return;
  const role = agentPlan(state, invocation.agent)?.loopRole;
  const { maxReopens, maxRoundTrips } = state.plan.loop;

  if (role === "verifier") {
    loop.lastVerdict = result.verdict;
    if (result.verdict === "VERIFIED") {
      loop.stage = "done";
    } else if (result.verdict === "REGRESSED") {
      escalate(state, effects, invocation, "the fix regressed: the verifier saw a new failure");
    } else if (result.verdict === "NOT_FIXED") {
      if (loop.fixBranch !== undefined) loop.reopens += 1;
      if (loop.reopens >= maxReopens && loop.fixBranch !== undefined) {
        escalate(
          state,
          effects,
          invocation,
          `still not fixed after ${loop.reopens} reopen(s) (max_reopens ${maxReopens})`,
        );
      } else {
        enqueueRole(state, effects, loop, "fixer", { branch: loop.fixBranch });
      }
    } else {
      escalate(state, effects, invocation, "the verifier recorded no verdict");
    }
  } else if (role === "fixer") {
    if (!result.branch) {
      escalate(state, effects, invocation, "the fixer recorded no branch");
    } else {
      loop.fixBranch = result.branch;
      enqueueRole(state, effects, loop, "reviewer", { branch: result.branch });
    }
  } else if (role === "reviewer") {
    if (result.review === "APPROVE") {
      enqueueRole(state, effects, loop, "verifier", { branch: loop.fixBranch });
    } else if (result.review === "REQUEST_CHANGES") {
      if (loop.roundTrips >= maxRoundTrips) {
        escalate(
          state,
          effects,
          invocation,
          `changes still requested after ${loop.roundTrips} round trip(s) (max_round_trips ${maxRoundTrips})`,
        );
      } else {
        loop.roundTrips += 1;
        enqueueRole(state, effects, loop, "fixer", { branch: loop.fixBranch });
      }
    } else if (result.review === "ESCALATE") {
      escalate(state, effects, invocation, "the reviewer escalated to a person");
    } else {
      escalate(state, effects, invocation, "the reviewer recorded no review");
    }
  }
}

function enqueueRole(
  state: RunState,
  effects: RouterEffect[],
  loop: TicketLoop,
  role: "verifier" | "fixer" | "reviewer",
  input: DispatchInput,
) {
  const agent = state.plan.agents.find(
    (candidate) => candidate.phase === "verify" && candidate.loopRole === role,
  );
  if (!agent) {
    loop.stage = "escalated";
    effects.push({
      type: "record",
      kind: "escalation",
      data: { ticket: loop.ticket, reason: `the run's roster has no ${role} agent` },
    });
    return;
  }
  loop.stage = role === "verifier" ? "verify" : role === "fixer" ? "fix" : "review";
  const round = loop.reopens + loop.roundTrips + 1;
  enqueue(state, agent, {
    ticket: loop.ticket,
    finding_id: loop.findingId,
    round,
    ...withoutUndefined(input),
  });
}

function escalate(state: RunState, effects: RouterEffect[], invocation: Invocation, reason: string) {
  const loop = state.tickets.find((candidate) => candidate.ticket === invocation.input.ticket);
  if (loop) loop.stage = "escalated";
  effects.push({
    type: "record",
    kind: "escalation",
    data: {
      ticket: invocation.input.ticket ?? null,
      agent: invocation.agent,
      invocation: invocation.id,
      reason,
    },
  });
}

/** `refused`: a seat refused a call whose worst case could cross the cap, so the run stops below it. */
function checkRunBudget(state: RunState, effects: RouterEffect[], refused = false) {
  const { usd, tokens } = state.plan.budget;
  const over =
    refused ||
    (usd !== undefined && state.spend.usd >= usd) ||
    (tokens !== undefined && state.spend.tokens >= tokens);
  if (!over || state.budgetExceeded) return;
  state.budgetExceeded = true;
  effects.push({
    type: "record",
    kind: "budget_exceeded",
    data: {
      scope: "run",
      spent_usd: round(state.spend.usd),
      spent_tokens: state.spend.tokens,
      cap_usd: usd ?? null,
      cap_tokens: tokens ?? null,
      not_dispatched: state.queue.map((queued) => queued.agent),
    },
  });
  for (const queued of state.queue) state.ended[queued.id] = "over_budget";
  state.queue = [];
}

/** Fills free slots from the queue, and moves to the next phase when the current one has drained. */
function advance(state: RunState, effects: RouterEffect[]) {
  if (state.status !== "active") return;
  for (;;) {
    dispatchQueued(state, effects);
    if (state.queue.length > 0 || Object.keys(state.running).length > 0) return;
    if (state.budgetExceeded) return finish(state, effects, "budget_exceeded");
    if (state.phaseIndex >= 0) {
      effects.push({ type: "record", kind: "phase_finished", data: { phase: currentPhase(state) } });
    }
    state.phaseIndex += 1;
    if (state.phaseIndex >= PHASES.length) return finish(state, effects, "completed");
    const phase = currentPhase(state);
    const planned = planPhase(state, effects, phase);
    if (planned > 0)
      effects.push({ type: "record", kind: "phase_started", data: { phase, invocations: planned } });
  }
}

function dispatchQueued(state: RunState, effects: RouterEffect[]) {
  while (state.queue.length > 0 && !state.budgetExceeded) {
    const running = Object.values(state.running);
    const head = state.queue[0]!;
    const headPlan = agentPlan(state, head.agent);
    if (running.some((invocation) => agentPlan(state, invocation.agent)?.exclusive)) return;
    if (headPlan?.exclusive && running.length > 0) return;
    if (running.length >= state.plan.concurrency) return;
    state.queue.shift();
    const spent = state.agentSpend[head.agent];
    const cap = headPlan?.budget;
    if (
      state.agentsOverBudget?.includes(head.agent) ||
      (spent &&
        cap &&
        ((cap.usd !== undefined && spent.usd >= cap.usd) ||
          (cap.tokens !== undefined && spent.tokens >= cap.tokens)))
    ) {
      state.ended[head.id] = "over_budget";
      effects.push({
        type: "record",
        kind: "budget_exceeded",
        data: {
          scope: "agent",
          agent: head.agent,
          invocation: head.id,
          spent_usd: round(spent?.usd ?? 0),
          spent_tokens: spent?.tokens ?? 0,
        },
      });
      continue;
    }
    state.running[head.id] = head;
    effects.push({ type: "dispatch", invocation: head, delayMs: 0 });
  }
}

/** Queues the invocations of a phase; answers how many. Exclusive agents go last. */
function planPhase(state: RunState, effects: RouterEffect[], phase: Phase): number {
  const agents = state.plan.agents.filter((agent) => agent.phase === phase);
  const ordered = [
    ...agents.filter((agent) => !agent.exclusive),
    ...agents.filter((agent) => agent.exclusive),
  ];
  const before = state.queue.length;
  if (phase === "verify") {
    for (const loop of state.tickets) {
      if (loop.stage === "verify") enqueueRole(state, effects, loop, "verifier", {});
    }
    return state.queue.length - before;
  }
  for (const agent of ordered) {
    if (agent.cardinality === "per_finding") {
      // Longest first: a slow replay started last would hold the whole phase after the others are done.
      const fileable = state.findings.filter((candidate) => candidate.fileable);
      for (const finding of [...fileable.filter((one) => one.slow), ...fileable.filter((one) => !one.slow)]) {
        enqueue(state, agent, { finding_id: finding.id });
      }
    } else if (agent.cardinality === "per_run") {
      enqueue(state, agent, {});
    }
  }
  return state.queue.length - before;
}

function enqueue(state: RunState, agent: AgentPlan, input: DispatchInput) {
  const id = `${agent.name.toLowerCase()}-${state.nextInvocation}`;
  state.nextInvocation += 1;
  state.queue.push({ id, agent: agent.name, phase: agent.phase, input, attempt: 0 });
}

function finish(state: RunState, effects: RouterEffect[], status: "completed" | "budget_exceeded") {
  state.status = "done";
  state.endReason = status;
  effects.push({ type: "finish", status });
}

function takeRunning(state: RunState, id: string): Invocation | undefined {
  const invocation = state.running[id];
  if (invocation) delete state.running[id];
  return invocation;
}

function addSpend(state: RunState, agent: string, usd: number, tokens: number) {
  state.spend.usd += usd;
  state.spend.tokens += tokens;
  const spent = state.agentSpend[agent] ?? { usd: 0, tokens: 0 };
  spent.usd += usd;
  spent.tokens += tokens;
  state.agentSpend[agent] = spent;
}

function hasVerifyLoop(state: RunState): boolean {
  return state.plan.agents.some((agent) => agent.phase === "verify");
}

function agentPlan(state: RunState, name: string): AgentPlan | undefined {
  return state.plan.agents.find((agent) => agent.name === name);
}

function currentPhase(state: RunState): Phase {
  return PHASES[state.phaseIndex]!;
}

function newTicketLoop(ticket: string, findingId?: string): TicketLoop {
  return { ticket, ...(findingId ? { findingId } : {}), stage: "verify", reopens: 0, roundTrips: 0 };
}

function retriedData(invocation: Invocation, reason: string): Record<string, unknown> {
  return { agent: invocation.agent, invocation: invocation.id, attempt: invocation.attempt, reason };
}

function withoutUndefined<Value extends object>(value: Value): Partial<Value> {
  return Object.fromEntries(
    Object.entries(value).filter(([, entry]) => entry !== undefined),
  ) as Partial<Value>;
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
