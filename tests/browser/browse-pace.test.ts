import { describe, expect, it } from "vitest";
import { BrowsePace, loadPerCore, MAX_STRETCH } from "../../src/probes/browser/browse-pace.ts";

// The browser's passes stretch their time bound with how slowly pages load and how busy the machine is:
// not at all on an idle machine, more as either grows, never past the cap, and following the recent
// loads rather than the first.

const idle = () => 0;

describe("BrowsePace", () => {
  it("does not stretch before any load or while pages load as fast as on an idle machine", () => {
    const pace = new BrowsePace(idle);
    expect(pace.stretch()).toBe(1);
    for (const ms of [300, 800, 1200]) pace.record(ms);
    expect(pace.stretch()).toBe(1);
    expect(pace.deadline(1000, 90_000)).toBe(91_000);
  });

  it("stretches with the median recent load, up to the cap", () => {
    const pace = new BrowsePace(idle);
    for (const ms of [3000, 5000, 4000, 100_000]) pace.record(ms);
    // Median of the four (the upper middle): one stalled load does not decide the pace on its own.
    expect(pace.stretch()).toBe(2.5);
    for (let index = 0; index < 9; index += 1) pace.record(60_000);
    expect(pace.stretch()).toBe(MAX_STRETCH);
    expect(pace.deadline(0, 90_000)).toBe(90_000 * MAX_STRETCH);
  });

  it("follows the recent loads: a machine that calms down shrinks the stretch again", () => {
    const pace = new BrowsePace(idle);
    for (let index = 0; index < 9; index += 1) pace.record(8000);
    expect(pace.stretch()).toBe(MAX_STRETCH);
    for (let index = 0; index < 9; index += 1) pace.record(500);
    expect(pace.stretch()).toBe(1);
  });

  it("stretches with the load per core while small pages still arrive quickly", () => {
    let load = 0.5;
    const pace = new BrowsePace(() => load);
    for (const ms of [300, 400, 500]) pace.record(ms);
    // No busier than a run makes a machine on its own (two processes per core): nothing to stretch for.
    expect(pace.stretch()).toBe(1);
    load = 2;
    expect(pace.stretch()).toBe(1);
    load = 4;
    expect(pace.stretch()).toBe(2);
    load = 7.5;
    expect(pace.stretch()).toBe(MAX_STRETCH);
    // Slow loads on a calm machine still count: the larger of the two readings decides.
    load = 1.2;
    for (let index = 0; index < 9; index += 1) pace.record(5000);
    expect(pace.stretch()).toBe(2.5);
  });

  it("reads this machine's load as a non-negative number of processes per core", () => {
    expect(loadPerCore()).toBeGreaterThanOrEqual(0);
    expect(Number.isFinite(loadPerCore())).toBe(true);
    // Runnable processes shared out over the cores; a machine that reports no core counts as one.
    expect(loadPerCore(6, 2)).toBe(3);
    expect(loadPerCore(1.5, 0)).toBe(1.5);
  });
});
