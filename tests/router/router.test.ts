import { describe, expect, it } from "vitest";
import { replay } from "../../src/router/executor.ts";
import { initialState } from "../../src/router/run-state.ts";
import { transition } from "../../src/router/transition.ts";
import { activityOf } from "../../src/run/run-activity.ts";
import { replaysSlowly } from "../../src/runner/run-agent.ts";
import { plan, runScripted } from "./scripted-router.ts";

const discovery = [
  { name: "MAPPER", phase: "map" as const },
  { name: "API", phase: "discover" as const },
  { name: "AUDITOR", phase: "discover" as const },
  { name: "REPRODUCER", phase: "reproduce" as const, cardinality: "per_finding" as const },
  { name: "TRIAGE", phase: "file" as const },
];

describe("router phases", () => {
  it("runs phases in order and a per-finding agent once per fileable finding", async () => {
    const run = await runScripted(plan(discovery), {
      API: [
        {
          findings: [
            { id: "e1", fileable: true },
            { id: "e2", fileable: false },
          ],
        },
      ],
      AUDITOR: [{ findings: [{ id: "e3", fileable: true }] }],
    });
    expect(run.order).toEqual(["MAPPER", "API", "AUDITOR", "REPRODUCER", "REPRODUCER", "TRIAGE"]);
    const reproduced = run.dispatched.filter((invocation) => invocation.agent === "REPRODUCER");
    expect(reproduced.map((invocation) => invocation.input.finding_id)).toEqual(["e1", "e3"]);
    expect(run.state.status).toBe("done");
    expect(run.state.endReason).toBe("completed");
    expect(run.kinds("phase_started").map((data) => data.phase)).toEqual([
      "map",
      "discover",
      "reproduce",
      "file",
    ]);
  });

  it("starts the reproduction of slow findings (timings, channels) first, so none holds the phase alone", async () => {
    const run = await runScripted(plan(discovery), {
      API: [{ findings: [{ id: "quick", fileable: true }] }],
      AUDITOR: [
        {
          findings: [
            { id: "timed", fileable: true, slow: true },
            { id: "also-quick", fileable: true },
          ],
        },
      ],
    });
    const reproduced = run.dispatched.filter((invocation) => invocation.agent === "REPRODUCER");
    expect(reproduced.map((invocation) => invocation.input.finding_id)).toEqual([
      "timed",
      "quick",
      "also-quick",
    ]);
  });

  it("counts the findings replayed in a browser as slow, with timings and channels, and no others", () => {
    for (const domain of ["performance", "realtime", "ui", "usability"])
      expect(replaysSlowly(domain)).toBe(true);
    for (const domain of ["api", "security", "data", "architecture", undefined])
      expect(replaysSlowly(domain)).toBe(false);
  });

  it("never runs more discovery agents at once than the cap, and runs exclusive agents alone", () => {
    const agents = ["A", "B", "C"].map((name) => ({ name, phase: "discover" as const }));
    const started = transition(initialState(), {
      type: "run.start",
      plan: plan([...agents, { name: "QUIET", phase: "discover", exclusive: true }], { concurrency: 2 }),
    });
    const first = started.effects.filter((effect) => effect.type === "dispatch");
    expect(first).toHaveLength(2);
    let state = started.state;
    const ids = Object.keys(state.running);
    const done = (id: string) => ({
      type: "agent.done" as const,
      invocation: id,
      result: { outcome: "completed" as const, costUsd: 0, tokens: 0, findings: [] },
    });
    let step = transition(state, done(ids[0]!));
    expect(step.effects.filter((effect) => effect.type === "dispatch")).toHaveLength(1);
    state = step.state;
    step = transition(state, done(ids[1]!));
    // C is still running: the exclusive agent waits.
    expect(step.effects.filter((effect) => effect.type === "dispatch")).toHaveLength(0);
    state = step.state;
    step = transition(state, done(Object.keys(state.running)[0]!));
    const quiet = step.effects.filter((effect) => effect.type === "dispatch");
    expect(quiet).toHaveLength(1);
    expect(quiet[0]!.type === "dispatch" && quiet[0]!.invocation.agent).toBe("QUIET");
  });
});

describe("what the executor tells of the run's activity", () => {
  it("shows who runs and how many wait after every event, as tools read it", async () => {
    const seen: string[] = [];
    const agents = ["A", "B", "C"].map((name) => ({ name, phase: "discover" as const }));
    await runScripted(
      plan(agents, { concurrency: 2 }),
      {},
      {
        observe: (state) => {
          const activity = activityOf(state);
          seen.push(`${activity.running.join("+") || "-"} queued ${activity.queued}`);
        },
      },
    );
    // Two at once under the cap, the third waiting for a slot, then the phase draining.
    expect(seen).toContain("A+B queued 1");
    expect(seen.at(-1)).toBe("- queued 0");
  });
});

describe("failures", () => {
  it("retries a transient failure with backoff, then dead-letters it without failing the run", async () => {
    const run = await runScripted(plan(discovery), {
      API: [{ fail: "429 too many requests", transient: true }],
      AUDITOR: [{ findings: [{ id: "e9", fileable: true }] }],
    });
    expect(run.order.filter((agent) => agent === "API")).toHaveLength(3);
    expect(run.kinds("agent_retried").map((data) => data.delay_ms)).toEqual([10, 20]);
    expect(run.kinds("agent_dead_lettered")).toEqual([
      expect.objectContaining({ agent: "API", attempts: 3, error: "429 too many requests" }),
    ]);
    expect(run.state.endReason).toBe("completed");
    expect(run.order).toContain("TRIAGE");
  });

  it("dead-letters a non-transient failure at once", async () => {
    const run = await runScripted(plan(discovery), { API: [{ fail: "401 unauthorized", transient: false }] });
    expect(run.order.filter((agent) => agent === "API")).toHaveLength(1);
    expect(run.kinds("agent_dead_lettered")).toHaveLength(1);
  });

  it("records a skipped agent and goes on", async () => {
    const run = await runScripted(plan(discovery), { AUDITOR: [{ skip: "no builtin playbook" }] });
    expect(run.kinds("agent_skipped")).toEqual([
      expect.objectContaining({ agent: "AUDITOR", reason: "no builtin playbook" }),
    ]);
    expect(run.state.endReason).toBe("completed");
  });
});

describe("budget governor", () => {
  it("stops dispatching when the run's budget is crossed and ends with budget_exceeded", async () => {
    const run = await runScripted(plan(discovery, { budget: { usd: 1 }, concurrency: 1 }), {
      MAPPER: [{ costUsd: 0.4 }],
      API: [{ costUsd: 0.7, findings: [{ id: "e1", fileable: true }] }],
    });
    expect(run.order).toEqual(["MAPPER", "API"]);
    expect(run.kinds("budget_exceeded")).toEqual([
      expect.objectContaining({ scope: "run", cap_usd: 1, not_dispatched: ["AUDITOR"] }),
    ]);
    expect(run.state.endReason).toBe("budget_exceeded");
    expect(run.state.findings).toEqual([{ id: "e1", fileable: true }]);
  });

  it("skips further invocations of an agent over its own budget", async () => {
    const run = await runScripted(
      plan(
        [
          { name: "API", phase: "discover" },
          { name: "REPRODUCER", phase: "reproduce", cardinality: "per_finding", budget: { tokens: 100 } },
        ],
        { concurrency: 1 },
      ),
      {
        API: [{ findings: [1, 2, 3].map((n) => ({ id: `e${n}`, fileable: true })) }],
        REPRODUCER: [{ tokens: 150 }],
      },
    );
    expect(run.order.filter((agent) => agent === "REPRODUCER")).toHaveLength(1);
    expect(run.kinds("budget_exceeded").filter((data) => data.scope === "agent")).toHaveLength(2);
    expect(run.state.endReason).toBe("completed");
  });
});

const loopAgents = [
  {
    name: "VERIFIER",
    phase: "verify" as const,
    cardinality: "per_ticket" as const,
    loopRole: "verifier" as const,
  },
  { name: "FIXER", phase: "verify" as const, cardinality: "per_ticket" as const, loopRole: "fixer" as const },
  {
    name: "REVIEWER",
    phase: "verify" as const,
    cardinality: "per_ticket" as const,
    loopRole: "reviewer" as const,
  },
];
const loopPlan = (overrides = {}) => plan(loopAgents, { tickets: [{ key: "QA-1" }], ...overrides });

describe("verify loop", () => {
  it("VERIFIED at once ends the ticket", async () => {
    const run = await runScripted(loopPlan(), { VERIFIER: [{ verdict: "VERIFIED" }] });
    expect(run.order).toEqual(["VERIFIER"]);
    expect(run.state.tickets[0]!.stage).toBe("done");
  });

  it("NOT_FIXED → FIXER → REVIEWER APPROVE → VERIFIER on the fixer's branch → VERIFIED", async () => {
    const run = await runScripted(loopPlan(), {
      VERIFIER: [{ verdict: "NOT_FIXED" }, { verdict: "VERIFIED" }],
      FIXER: [{ branch: "fix/qa-1-a" }],
      REVIEWER: [{ review: "APPROVE" }],
    });
    expect(run.order).toEqual(["VERIFIER", "FIXER", "REVIEWER", "VERIFIER"]);
    expect(run.dispatched[2]!.input.branch).toBe("fix/qa-1-a");
    expect(run.dispatched[3]!.input.branch).toBe("fix/qa-1-a");
    expect(run.state.tickets[0]!.stage).toBe("done");
    expect(run.kinds("escalation")).toEqual([]);
  });

  it("REGRESSED escalates to a person", async () => {
    const run = await runScripted(loopPlan(), {
      VERIFIER: [{ verdict: "NOT_FIXED" }, { verdict: "REGRESSED" }],
      FIXER: [{ branch: "fix/qa-1" }],
      REVIEWER: [{ review: "APPROVE" }],
    });
    expect(run.state.tickets[0]!.stage).toBe("escalated");
    expect(run.kinds("escalation")[0]!.reason).toMatch(/regressed/);
  });

  it("reopens are bounded by max_reopens", async () => {
    const run = await runScripted(loopPlan(), {
      VERIFIER: [{ verdict: "NOT_FIXED" }],
      FIXER: [{ branch: "fix/qa-1" }],
      REVIEWER: [{ review: "APPROVE" }],
    });
    // initial NOT_FIXED, then two failed re-verifies (max_reopens 2)
    expect(run.order).toEqual(["VERIFIER", "FIXER", "REVIEWER", "VERIFIER", "FIXER", "REVIEWER", "VERIFIER"]);
    expect(run.state.tickets[0]).toMatchObject({ stage: "escalated", reopens: 2 });
  });

  it("REQUEST_CHANGES goes back to the fixer at most max_round_trips times", async () => {
    const run = await runScripted(loopPlan(), {
      VERIFIER: [{ verdict: "NOT_FIXED" }],
      FIXER: [{ branch: "fix/qa-1" }],
      REVIEWER: [{ review: "REQUEST_CHANGES" }],
    });
    expect(run.order).toEqual(["VERIFIER", "FIXER", "REVIEWER", "FIXER", "REVIEWER", "FIXER", "REVIEWER"]);
    expect(run.state.tickets[0]).toMatchObject({ stage: "escalated", roundTrips: 2 });
  });

  it("ESCALATE from the reviewer stops the loop", async () => {
    const run = await runScripted(loopPlan(), {
      VERIFIER: [{ verdict: "NOT_FIXED" }],
      FIXER: [{ branch: "fix/qa-1" }],
      REVIEWER: [{ review: "ESCALATE" }],
    });
    expect(run.order).toEqual(["VERIFIER", "FIXER", "REVIEWER"]);
    expect(run.kinds("escalation")[0]!.reason).toMatch(/reviewer escalated/);
  });

  it("a verifier that records no verdict escalates rather than inventing one", async () => {
    const run = await runScripted(loopPlan(), { VERIFIER: [{}] });
    expect(run.kinds("escalation")[0]!.reason).toMatch(/no verdict/);
  });

  it("tickets filed in the file phase enter the loop", async () => {
    const run = await runScripted(plan([{ name: "TRIAGE", phase: "file" }, ...loopAgents]), {
      TRIAGE: [{ ticketsFiled: [{ key: "QA-7", findingId: "e1" }] }],
      VERIFIER: [{ verdict: "VERIFIED" }],
    });
    expect(run.dispatched[1]!.input).toMatchObject({ ticket: "QA-7", finding_id: "e1" });
  });
});

describe("resume", () => {
  it("replaying the recorded events rebuilds the state, and resume re-dispatches only what was running", async () => {
    const full = await runScripted(plan(discovery), { API: [{ findings: [{ id: "e1", fileable: true }] }] });
    // Cut the ledger right after API was dispatched: MAPPER finished, API and AUDITOR in flight.
    const cut = full.entries.findIndex(
      (entry) =>
        entry.kind === "router_effect" &&
        (entry.data.effect as { type: string; invocation?: { agent: string } }).invocation?.agent ===
          "AUDITOR",
    );
    const state = replay(full.entries.slice(0, cut + 1));
    expect(
      Object.values(state.running)
        .map((invocation) => invocation.agent)
        .sort(),
    ).toEqual(["API", "AUDITOR"]);
    expect(Object.keys(state.ended)).toHaveLength(1);
    const resumed = await runScripted(
      plan(discovery),
      { API: [{ findings: [{ id: "e1", fileable: true }] }] },
      {
        start: state,
        first: { type: "run.resume" },
      },
    );
    expect(resumed.order).toEqual(["API", "AUDITOR", "REPRODUCER", "TRIAGE"]);
    expect(resumed.state.endReason).toBe("completed");
  });
});
