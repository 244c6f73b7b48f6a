import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureApp } from "./fixture-app.ts";
import { startFixtureApp } from "./fixture-app.ts";
import { probe, summary } from "./probe-harness.ts";

let app: FixtureApp;
beforeAll(async () => {
  app = await startFixtureApp();
});
afterAll(async () => {
  await app.close();
});

describe("ws_probe_ordering", () => {
  it("reports numbered events that arrive out of order, confirmed by a second burst", async () => {
    const answer = await probe(app, "ws_probe_ordering", { channel: "/ws/shuffled", events: 8 });
    expect(summary(answer)).toEqual({ filed: ["ws-ordering /ws/shuffled"], held: [] });
    expect(answer.candidates[0]!.summary).toMatch(/seq \d+ arrived after seq \d+ \(backwards\)/);
    expect(answer.stats.channels[0]).toMatchObject({
      sequence_field: "seq",
      burst_of: "updates of one /api/notes record",
    });
  });

  it("confirms a number repeated once in a sequential burst with a concurrent burst, where changes race", async () => {
    const answer = await probe(app, "ws_probe_ordering", { channel: "/ws/racy", events: 8 });
    expect(summary(answer)).toEqual({ filed: ["ws-ordering /ws/racy"], held: [] });
    const bursts = answer.stats.channels[0]!.bursts as Array<{ kind: string; problems: string[] }>;
    expect(bursts.map((burst) => [burst.kind, burst.problems.length > 0])).toEqual([
      ["sequential", true],
      ["sequential", false],
      ["concurrent", true],
    ]);
    expect(answer.candidates[0]!.summary).toMatch(/seq \d+ came on more than one frame/);
  });

  it("tries a second concurrent burst after a clean one, for a race that shows only once the server is loaded", async () => {
    const answer = await probe(app, "ws_probe_ordering", { channel: "/ws/crowded", events: 8 });
    expect(summary(answer)).toEqual({ filed: ["ws-ordering /ws/crowded"], held: [] });
    const bursts = answer.stats.channels[0]!.bursts as Array<{ kind: string; problems: string[] }>;
    expect(bursts.map((burst) => [burst.kind, burst.problems.length > 0])).toEqual([
      ["sequential", false],
      ["concurrent", false],
      ["concurrent", true],
      ["concurrent", true],
    ]);
    expect(answer.candidates[0]!.summary).toMatch(/During a concurrent burst of 8 updates/);
    expect(answer.candidates[0]!.summary).toMatch(/seq \d+ came on more than one frame/);
  });

  it("files a number shared by two different events even when no later burst repeats it", async () => {
    const answer = await probe(app, "ws_probe_ordering", { channel: "/ws/glitch", events: 6 });
    expect(summary(answer)).toEqual({ filed: ["ws-ordering /ws/glitch"], held: [] });
    expect(answer.candidates[0]!.confidence).toBe(0.8);
    expect(answer.candidates[0]!.summary).toMatch(/different events/);
  });

  it("holds one event delivered twice for a person: a duplicate delivery is not broken numbering", async () => {
    const answer = await probe(app, "ws_probe_ordering", { channel: "/ws/echo", events: 6 });
    expect(summary(answer)).toEqual({ filed: [], held: ["ws-ordering /ws/echo"] });
  });

  it("finds nothing on a channel that sends in order, under a sequential and two concurrent bursts", async () => {
    const answer = await probe(app, "ws_probe_ordering", { channel: "/ws/ordered", events: 8 });
    expect(answer.candidates).toEqual([]);
    const bursts = answer.stats.channels[0]!.bursts as Array<{
      kind: string;
      events: number;
      problems: string[];
    }>;
    expect(bursts).toEqual([
      { kind: "sequential", events: 8, problems: [], median_gap_ms: expect.any(Number) },
      { kind: "concurrent", events: 8, problems: [], median_gap_ms: expect.any(Number) },
      { kind: "concurrent", events: 8, problems: [], median_gap_ms: expect.any(Number) },
    ]);
  });
});

describe("ws_probe_reconnect", () => {
  it("reports a channel that promises to resume but replays nothing", async () => {
    const answer = await probe(app, "ws_probe_reconnect", { channel: "/ws/forgetful" });
    expect(summary(answer)).toEqual({ filed: ["ws-reconnect /ws/forgetful"], held: [] });
    expect(answer.stats.channels[0]).toMatchObject({ resume_param: "since", missed: 3, replayed: 0 });
  });

  it("finds nothing on a channel that replays exactly the missed events", async () => {
    const answer = await probe(app, "ws_probe_reconnect", { channel: "/ws/resumable" });
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.channels[0]).toMatchObject({
      resume_param: "last_event_id",
      missed: 3,
      replayed: 3,
      duplicated_seen_event: false,
    });
  });

  it("does not judge a channel that promises no resume", async () => {
    const answer = await probe(app, "ws_probe_reconnect", { channel: "/ws/secure" });
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.events_caused).toBe(0);
    expect(answer.stats.notes.join("\n")).toMatch(/does not say it can resume/);
  });
});

describe("ws_probe_backpressure", () => {
  it("reports a server that queues everything for a client that stopped reading", async () => {
    const answer = await probe(app, "ws_probe_backpressure", { channel: "/ws/firehose", events: 36 });
    expect(summary(answer)).toEqual({ filed: ["ws-backpressure /ws/firehose"], held: [] });
    expect(answer.stats.channels[0]).toMatchObject({ stalled_dropped: false });
  });

  it("finds nothing when the server closes the slow client", async () => {
    const answer = await probe(app, "ws_probe_backpressure", { channel: "/ws/guarded", events: 36 });
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.channels[0]).toMatchObject({ stalled_dropped: true, stalled_close_code: 1013 });
  });

  it("does not judge small events, which cannot fill a client's buffers", async () => {
    const answer = await probe(app, "ws_probe_backpressure", { channel: "/ws/secure", events: 5 });
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.notes.join("\n")).toMatch(/too little to fill/);
  });
});
