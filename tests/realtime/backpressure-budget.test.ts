import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureApp } from "./fixture-app.ts";
import { startFixtureApp } from "./fixture-app.ts";
import { probe } from "./probe-harness.ts";

// The backpressure probe samples the health endpoint beside its burst of writes. A request budget that runs
// out mid-burst must end the probe quietly (a note), not leave the sampler's rejection unhandled, which
// takes the whole run down. And a burst of events far too small to fill buffers is not sent at all: it
// could prove nothing, and other channels need the budget.

let app: FixtureApp;
beforeAll(async () => {
  app = await startFixtureApp();
});
afterAll(async () => {
  await app.close();
});

describe("ws_probe_backpressure within its budget", () => {
  it("stops with a note when the budget is spent during the burst", async () => {
    const answer = await probe(app, "ws_probe_backpressure", {
      channel: "/ws/firehose",
      events: 36,
      max_requests: 20,
    });
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.notes.join("\n")).toMatch(/stopped early: request budget of 20 spent/);
  });

  it("causes one event, not a burst, when events are far too small to matter", async () => {
    const answer = await probe(app, "ws_probe_backpressure", { channel: "/ws/secure", events: 40 });
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.events_caused).toBe(1);
  });
});
