import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { FleetHold, type FleetLimitOptions } from "../../src/queue/fleet-limits.ts";
import { JobQueue } from "../../src/queue/job-queue.ts";
import { freshDatabase, postgresForFile } from "./queue-support.ts";

// The limits every worker keeps together, each hold on a connection of its own as two workers' would be:
// requests counted where they land (a target that tracks how many it serves at once), the target lock's
// order, and locks that come back the moment the connection of a dead worker goes.

const postgres = postgresForFile();
let url: string;
beforeAll(async () => {
  url = await freshDatabase(postgres().url);
  // Workers open the queue before anything else, which lays out its tables.
  await (await JobQueue.open(url)).close();
});

/** A target that answers after a pause and counts the requests it serves at once, per first path segment. */
async function countingTarget() {
  const inFlight = new Map<string, number>();
  let total = 0;
  const peaks = { total: 0, byTarget: new Map<string, number>() };
  const app = http.createServer((request, response) => {
    const name = (request.url ?? "/").split("/")[1] ?? "";
    const now = (inFlight.get(name) ?? 0) + 1;
    inFlight.set(name, now);
    total += 1;
    peaks.byTarget.set(name, Math.max(peaks.byTarget.get(name) ?? 0, now));
    peaks.total = Math.max(peaks.total, total);
    setTimeout(() => {
      inFlight.set(name, (inFlight.get(name) ?? 1) - 1);
      total -= 1;
      response.end("ok");
    }, 15);
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  return { base, peaks, close: () => new Promise((resolve) => app.close(resolve)) };
}

function options(overrides: Partial<FleetLimitOptions>): FleetLimitOptions {
  return {
    url,
    target: "shop",
    exclusive: false,
    targetCap: 3,
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** `count` requests at once through the hold's limiter, as an agent's probes send them. */
async function hammer(hold: FleetHold, base: string, path: string, count: number): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const release = await hold.limiter.acquire();
      try {
        await (await fetch(`${base}/${path}/${index}`)).text();
      } finally {
        release();
      }
    }),
  );
}

/** Whether `promise` settled within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const late = Symbol("late");
  const winner = await Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise((resolve) => setTimeout(() => resolve(late), ms)),
  ]);
  return winner !== late;
}

describe("fleet limits", () => {
  it("keeps two workers' requests to one target under its cap, counted at the target", async () => {
    const target = await countingTarget();
    const holds = await Promise.all([FleetHold.enter(options({})), FleetHold.enter(options({}))]);
    try {
      await Promise.all(holds.map((hold) => hammer(hold, target.base, "shop", 40)));
      // Each worker alone may send three at once; together they still only reach three.
      expect(target.peaks.byTarget.get("shop")).toBe(3);
    } finally {
      await Promise.all(holds.map((hold) => hold.leave()));
      await target.close();
    }
  }, 30_000);

  it("takes turns: a worker that keeps a slot busy gives it up to a waiting one within about a second", async () => {
    const target = await countingTarget();
    const [busy, late] = await Promise.all([
      FleetHold.enter(options({ target: "turns", targetCap: 1 })),
      FleetHold.enter(options({ target: "turns", targetCap: 1 })),
    ]);
    try {
      let busyDone = 0;
      const busyWork = hammer(busy, target.base, "turns", 150).then(() => {
        busyDone = performance.now();
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await hammer(late, target.base, "turns", 3);
      const lateDone = performance.now();
      await busyWork;
      // 150 requests of 15 ms one at a time take over two seconds; the late worker is served long before.
      expect(lateDone).toBeLessThan(busyDone - 500);
      expect(target.peaks.byTarget.get("turns")).toBe(1);
    } finally {
      await Promise.all([busy.leave(), late.leave()]);
      await target.close();
    }
  }, 30_000);

  it("keeps every target together under the global cap, each under its own", async () => {
    const target = await countingTarget();
    const holds = await Promise.all(
      ["north", "south", "north", "south"].map((name) =>
        FleetHold.enter(options({ target: name, targetCap: 3, globalCap: 4 })),
      ),
    );
    try {
      await Promise.all(
        holds.map((hold, index) => hammer(hold, target.base, index % 2 === 0 ? "north" : "south", 30)),
      );
      expect(target.peaks.total).toBe(4);
      expect(target.peaks.byTarget.get("north")).toBeLessThanOrEqual(3);
      expect(target.peaks.byTarget.get("south")).toBeLessThanOrEqual(3);
    } finally {
      await Promise.all(holds.map((hold) => hold.leave()));
      await target.close();
    }
  }, 30_000);

  it("runs an exclusive invocation alone, ahead of shared ones that came after it", async () => {
    const first = await FleetHold.enter(options({ target: "lock-order" }));
    const exclusive = FleetHold.enter(options({ target: "lock-order", exclusive: true }));
    expect(await settlesWithin(exclusive, 300)).toBe(false);
    // A shared request behind the waiting exclusive one waits too, so the exclusive one is not starved.
    const later = FleetHold.enter(options({ target: "lock-order" }));
    expect(await settlesWithin(later, 300)).toBe(false);
    await first.leave();
    const alone = await exclusive;
    expect(await settlesWithin(later, 300)).toBe(false);
    await alone.leave();
    await (await later).leave();
  }, 30_000);

  it("gives a dead worker's target lock and slots back as soon as its connection ends", async () => {
    const doomed = await FleetHold.enter(options({ target: "crash", targetCap: 1 }));
    const stuck = doomed.limiter.acquire();
    await stuck;
    const exclusive = FleetHold.enter(options({ target: "crash", targetCap: 1, exclusive: true }));
    expect(await settlesWithin(exclusive, 300)).toBe(false);
    // The worker's machine is gone: PostgreSQL ends its session, as when the connection drops.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks
         WHERE locktype = 'advisory' AND mode = 'ShareLock' AND granted AND pid <> pg_backend_pid()`,
      );
    } finally {
      await admin.end();
    }
    const survivor = await exclusive;
    const slot = survivor.limiter.acquire();
    expect(await settlesWithin(slot, 1000)).toBe(true);
    (await slot)();
    await survivor.leave();
    await doomed.leave();
  }, 30_000);

  it("stops waiting for the target when the worker is told to stop", async () => {
    const holder = await FleetHold.enter(options({ target: "stopping", exclusive: true }));
    const controller = new AbortController();
    const waiting = FleetHold.enter(options({ target: "stopping", signal: controller.signal }));
    expect(await settlesWithin(waiting, 200)).toBe(false);
    controller.abort();
    await expect(waiting).rejects.toThrow(/stopped while waiting for target stopping/);
    await holder.leave();
  }, 30_000);
});
