import { describe, expect, it } from "vitest";
import { BrowsePace, MAX_STRETCH } from "../../src/probes/browser/browse-pace.ts";

// The browser's passes stretch their time bound with how slowly pages load: not at all on an idle
// machine, more as loads grow, never past the cap, and following the recent loads rather than the first.

describe("BrowsePace", () => {
  it("does not stretch before any load or while pages load as fast as on an idle machine", () => {
    const pace = new BrowsePace();
    expect(pace.stretch()).toBe(1);
    for (const ms of [300, 800, 1200]) pace.record(ms);
    expect(pace.stretch()).toBe(1);
    expect(pace.deadline(1000, 90_000)).toBe(91_000);
  });

  it("stretches with the median recent load, up to the cap", () => {
    const pace = new BrowsePace();
    for (const ms of [3000, 5000, 4000, 100_000]) pace.record(ms);
    // Median of the four (the upper middle): one stalled load does not decide the pace on its own.
    expect(pace.stretch()).toBe(2.5);
    for (let index = 0; index < 9; index += 1) pace.record(60_000);
    expect(pace.stretch()).toBe(MAX_STRETCH);
    expect(pace.deadline(0, 90_000)).toBe(90_000 * MAX_STRETCH);
  });

  it("follows the recent loads: a machine that calms down shrinks the stretch again", () => {
    const pace = new BrowsePace();
    for (let index = 0; index < 9; index += 1) pace.record(8000);
    expect(pace.stretch()).toBe(MAX_STRETCH);
    for (let index = 0; index < 9; index += 1) pace.record(500);
    expect(pace.stretch()).toBe(1);
  });
});
