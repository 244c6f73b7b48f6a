import { describe, expect, it } from "vitest";
import type { AgentConfig } from "../../src/config/agent-schema.ts";
import { BrowsePace } from "../../src/probes/browser/browse-pace.ts";
import { passDeadline } from "../../src/probes/browser/pass-deadline.ts";
import { type Invocation, initialState } from "../../src/router/run-state.ts";
import { activityOf, othersStillAtWork, RUN_ACTIVITY_KEY } from "../../src/run/run-activity.ts";

// A browser pass past its own bound goes on only while the phase waits for other agents anyway.

/** An idle machine, whatever this one's load: the bounds read here are the passes' own. */
const idle = () => 0;

const invocation = (id: string, agent: string): Invocation => ({
  id,
  agent,
  phase: "discover",
  input: {},
  attempt: 0,
});

function runWith(running: string[], queued: string[]): Map<string, unknown> {
  const state = initialState();
  state.running = Object.fromEntries(
    running.map((agent, index) => [`r${index}`, invocation(`r${index}`, agent)]),
  );
  state.queue = queued.map((agent, index) => invocation(`q${index}`, agent));
  return new Map<string, unknown>([[RUN_ACTIVITY_KEY, activityOf(state)]]);
}

describe("othersStillAtWork", () => {
  it("is yes only while another agent runs and nobody waits for a slot", () => {
    expect(othersStillAtWork(runWith(["BROWSER", "LOAD"], []), "BROWSER")).toBe(true);
    expect(othersStillAtWork(runWith(["BROWSER"], []), "BROWSER")).toBe(false);
    expect(othersStillAtWork(runWith(["BROWSER", "LOAD"], ["GUIDE"]), "BROWSER")).toBe(false);
    // No executor told the run's activity (a tool called alone, agents on remote workers): no.
    expect(othersStillAtWork(new Map(), "BROWSER")).toBe(false);
  });
});

describe("passDeadline", () => {
  const agent = { name: "BROWSER" } as AgentConfig;

  it("keeps the pass's own bound when nobody else works", () => {
    const deadline = passDeadline(
      { shared: runWith(["BROWSER"], []), agent },
      new BrowsePace(idle),
      1_000,
      90_000,
    );
    expect(deadline()).toBe(91_000);
    expect(deadline.own()).toBe(91_000);
    // Past its bound (started long ago) with nobody else at work: no overtime is counted.
    const late = passDeadline(
      { shared: runWith(["BROWSER"], []), agent },
      new BrowsePace(idle),
      1_000,
      1_000,
    );
    expect(late()).toBe(2_000);
    expect(late.overtimeMs()).toBe(0);
  });

  it("goes on up to four times its bound while another agent works, and back to its own when it ends", () => {
    const shared = runWith(["BROWSER", "LOAD"], []);
    const deadline = passDeadline({ shared, agent }, new BrowsePace(idle), 1_000, 90_000);
    expect(deadline()).toBe(361_000);
    expect(deadline.own()).toBe(91_000);
    shared.set(RUN_ACTIVITY_KEY, activityOf({ ...initialState(), running: {} }));
    expect(deadline()).toBe(91_000);
    // Asked past its hard limit while others worked: overtime up to that limit.
    const started = Date.now() - 5_000;
    const working = runWith(["BROWSER", "LOAD"], []);
    const late = passDeadline({ shared: working, agent }, new BrowsePace(idle), started, 1_000);
    expect(late()).toBe(started + 4_000);
    expect(late.overtimeMs()).toBe(3_000);
  });
});
