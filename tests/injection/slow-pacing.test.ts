import { describe, expect, it } from "vitest";
import { SlowOperations, withIntendedDelay } from "../../src/probes/http/slow-operations.ts";

// The run's pacing refuses operations that answer slowly; a probe that measures time asks for its delay
// and must keep alternating its sleeps with their zero-second controls.

async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 300));
}

describe("slow-operation pacing and intended delays", () => {
  it("does not count a probe's intended sleep as the operation's slowness", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    expect(await pacing.enter("GET /label")).toBe(true);
    pacing.leave("GET /label", 40);
    // A 1-second sleep on a loaded machine answers after 1.9 s: 0.9 s of it is ordinary latency.
    await withIntendedDelay(1000, async () => {
      expect(await pacing.enter("GET /label")).toBe(true);
      now += 1900;
      pacing.leave("GET /label", 1900);
    });
    await settle();
    expect(await pacing.enter("GET /label")).toBe(true);
    expect(pacing.report()).toEqual({});
  });

  it("still finds an operation slow beyond the delay it was asked for", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    for (let strike = 0; strike < 2; strike += 1) {
      expect(await pacing.enter("GET /report")).toBe(true);
      await withIntendedDelay(1000, async () => {
        now += 4000;
        pacing.leave("GET /report", 4000);
      });
      await settle();
    }
    expect(await pacing.enter("GET /report")).toBe(false);
    expect(pacing.report()).toEqual({ "GET /report": 1 });
  });

  it("finds an operation slow after two slow answers in a row, and at once after a very slow one", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    for (const key of ["GET /report", "GET /export"]) expect(await pacing.enter(key)).toBe(true);
    now += 1900;
    pacing.leave("GET /report", 1900);
    await settle();
    now += 6000;
    pacing.leave("GET /export", 6000);
    await settle();
    expect(await pacing.enter("GET /export")).toBe(false);
    expect(await pacing.enter("GET /report")).toBe(true);
    now += 1900;
    pacing.leave("GET /report", 1900);
    await settle();
    expect(await pacing.enter("GET /report")).toBe(false);
    expect(pacing.report()).toEqual({ "GET /report": 1, "GET /export": 1 });
  });

  it("lets one slow answer make an operation suspect only: the next goes alone, a normal answer clears it", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    expect(await pacing.enter("GET /list")).toBe(true);
    now += 1800;
    pacing.leave("GET /list", 1800);
    await settle();
    expect(await pacing.enter("GET /list")).toBe(true);
    let second = false;
    const waiting = pacing.enter("GET /list").then((admitted) => {
      second = admitted;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(second).toBe(false);
    pacing.leave("GET /list", 40);
    await waiting;
    expect(second).toBe(true);
    pacing.leave("GET /list", 35);
    now += 1800;
    expect(await pacing.enter("GET /list")).toBe(true);
    pacing.leave("GET /list", 1800);
    await settle();
    expect(await pacing.enter("GET /list")).toBe(true);
    expect(pacing.report()).toEqual({});
  });

  it("measures slowness against the run's own pace, so a loaded target does not look slow everywhere", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    for (let index = 0; index < 20; index += 1) {
      expect(await pacing.enter(`GET /items/${index}`)).toBe(true);
      pacing.leave(`GET /items/${index}`, 300);
    }
    for (let strike = 0; strike < 2; strike += 1) {
      expect(await pacing.enter("GET /search")).toBe(true);
      now += 2500;
      pacing.leave("GET /search", 2500);
      await settle();
    }
    expect(await pacing.enter("GET /search")).toBe(true);
    pacing.leave("GET /search", 300);
    expect(pacing.report()).toEqual({});
  });

  it("passes the turn on without judging when a request got no answer, so suspicion stays", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    expect(await pacing.enter("GET /list")).toBe(true);
    now += 1800;
    pacing.leave("GET /list", 1800);
    await settle();
    expect(await pacing.enter("GET /list")).toBe(true);
    pacing.leave("GET /list", undefined);
    expect(await pacing.enter("GET /list")).toBe(true);
    now += 1800;
    pacing.leave("GET /list", 1800);
    await settle();
    expect(await pacing.enter("GET /list")).toBe(false);
  });

  it("re-tests a slow operation once half a minute has passed and lifts the ban on a normal answer", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    for (const _strike of [1, 2]) {
      expect(await pacing.enter("GET /report")).toBe(true);
      now += 2000;
      pacing.leave("GET /report", 2000);
      await settle();
    }
    expect(await pacing.enter("GET /report")).toBe(false);
    now += 31_000;
    expect(await pacing.enter("GET /report")).toBe(true);
    // While the re-test is out, others are still refused.
    expect(await pacing.enter("GET /report")).toBe(false);
    pacing.leave("GET /report", 50);
    expect(await pacing.enter("GET /report")).toBe(true);
    expect(pacing.report()).toEqual({});
  });

  it("doubles the ban each time a re-test is slow again, and a normal answer restores half a minute", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    const retest = async (afterMs: number, answerMs: number) => {
      now += afterMs - 1;
      expect(await pacing.enter("GET /forecast")).toBe(false);
      now += 1;
      expect(await pacing.enter("GET /forecast")).toBe(true);
      now += answerMs;
      pacing.leave("GET /forecast", answerMs);
      await settle();
    };
    const slowTwice = async () => {
      for (const _strike of [1, 2]) {
        expect(await pacing.enter("GET /forecast")).toBe(true);
        now += 2000;
        pacing.leave("GET /forecast", 2000);
        await settle();
      }
    };
    // The run's pace: ordinary answers elsewhere, so that 2 s stays slow however many slow answers follow.
    for (let index = 0; index < 20; index += 1) {
      expect(await pacing.enter(`GET /page/${index}`)).toBe(true);
      pacing.leave(`GET /page/${index}`, 40);
    }
    await slowTwice();
    await retest(30_000, 2000);
    await retest(60_000, 2000);
    await retest(120_000, 50);
    await slowTwice();
    await retest(30_000, 2000);
  });

  it("bans an operation for eight minutes at once after one very slow answer, and counts the answer", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    expect(await pacing.enter("GET /forecast")).toBe(true);
    now += 6000;
    pacing.leave("GET /forecast", 6000);
    await settle();
    expect(pacing.slowAnswersOf("GET /forecast")).toEqual([6000]);
    now += 31_000;
    expect(await pacing.enter("GET /forecast")).toBe(false);
    now += 450_000;
    expect(await pacing.enter("GET /forecast")).toBe(true);
  });

  it("blames the unpaced request that held the server, not a paced one queued behind it", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    expect(await pacing.enter("POST /login")).toBe(true);
    // A timing probe's report (sent outside the pacing) held a single-threaded server for 6 s; the sign-in
    // sent just after it answered right behind it.
    now = 16_000;
    pacing.observe("GET /forecast", 6000);
    now = 16_050;
    pacing.leave("POST /login", 5950);
    await settle();
    expect(pacing.report()).toEqual({ "GET /forecast": 0 });
    expect(await pacing.enter("POST /login")).toBe(true);
  });

  it("blames the operation that never answered at pace when a stall's answers end together", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    for (let round = 0; round < 10; round += 1) {
      for (const key of ["GET /users", "GET /projects"]) {
        expect(await pacing.enter(key)).toBe(true);
        pacing.leave(key, 40);
      }
    }
    // Two stalls of a single-threaded server: both times the report's answer is flushed a millisecond
    // after those of two reads that were queued behind it and answer fast on their own.
    for (let stall = 0; stall < 2; stall += 1) {
      for (const key of ["GET /users", "GET /projects", "GET /report"])
        expect(await pacing.enter(key)).toBe(true);
      now += 2000;
      pacing.leave("GET /users", 1990);
      pacing.leave("GET /projects", 1995);
      now += 1;
      pacing.leave("GET /report", 2001);
      await settle();
    }
    expect(pacing.report()).toEqual({ "GET /report": 0 });
    expect(await pacing.enter("GET /users")).toBe(true);
    expect(await pacing.enter("GET /report")).toBe(false);
  });

  it("does not blame a request that waited behind an intended sleep", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    for (const key of ["GET /label", "GET /list"]) {
      expect(await pacing.enter(key)).toBe(true);
      pacing.leave(key, 30);
    }
    // The sleep held a single-threaded server for a second; the list, queued behind it, took 1.7 s.
    await withIntendedDelay(1000, async () => {
      now += 1100;
      pacing.leave("GET /label", 1100);
    });
    now += 600;
    pacing.leave("GET /list", 1700);
    await settle();
    expect(await pacing.enter("GET /list")).toBe(true);
    expect(await pacing.enter("GET /label")).toBe(true);
    expect(pacing.report()).toEqual({});
  });

  it("refuses a delay that is not bounded", () => {
    expect(() => withIntendedDelay(60_000, async () => undefined)).toThrow(/not a bounded delay/);
  });
});
