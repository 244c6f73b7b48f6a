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
    expect(await pacing.enter("GET /report")).toBe(true);
    await withIntendedDelay(1000, async () => {
      now += 4000;
      pacing.leave("GET /report", 4000);
    });
    await settle();
    expect(await pacing.enter("GET /report")).toBe(false);
    expect(pacing.report()).toEqual({ "GET /report": 1 });
  });

  it("finds a plain slow answer slow, as before", async () => {
    let now = 10_000;
    const pacing = new SlowOperations(() => now);
    expect(await pacing.enter("GET /report")).toBe(true);
    now += 1900;
    pacing.leave("GET /report", 1900);
    await settle();
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
