import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Semaphore } from "../../src/probes/http/concurrency.ts";
import { HttpClient, RequestBudget } from "../../src/probes/http/http-client.ts";
import { QuietWindows } from "../../src/probes/http/quiet-window.ts";

// A measurement window gives one client the target to itself: it opens once the other clients' requests
// in flight have answered, and their new requests wait until it closes. Sign-ins pass (a window may need
// one), and nobody waits forever.

/** Every request's start and end at the server, by the `who` query parameter. */
const seen: Array<{ who: string; event: "start" | "end"; at: number }> = [];
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    const who = url.searchParams.get("who") ?? "?";
    const work = Number(url.searchParams.get("ms") ?? 0);
    seen.push({ who, event: "start", at: performance.now() });
    setTimeout(() => {
      seen.push({ who, event: "end", at: performance.now() });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    }, work);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(quiet: QuietWindows): HttpClient {
  return new HttpClient({
    limiter: new Semaphore(8),
    budget: new RequestBudget(100),
    writesAllowed: false,
    quiet,
  });
}

const get = (who: string, ms = 0) => ({ method: "GET", url: `${baseUrl}/?who=${who}&ms=${ms}` });

describe("measurement windows", () => {
  it("measures alone: others in flight finish first, others sent meanwhile wait until it closes", async () => {
    seen.length = 0;
    const quiet = new QuietWindows();
    const [measurer, other] = [client(quiet), client(quiet)];
    const before = other.send(get("before", 150));
    await new Promise((resolve) => setTimeout(resolve, 20));
    let during: Promise<unknown> | undefined;
    await measurer.quietly(async () => {
      during = other.send(get("during"));
      await measurer.send(get("measured", 100));
    });
    await Promise.all([before, during]);
    const at = (who: string, event: "start" | "end") =>
      seen.find((each) => each.who === who && each.event === event)!.at;
    // The window opened after the earlier request answered, and the later one started after it closed.
    expect(at("measured", "start")).toBeGreaterThanOrEqual(at("before", "end"));
    expect(at("during", "start")).toBeGreaterThanOrEqual(at("measured", "end"));
    expect(quiet.stats).toMatchObject({ windows: 1, waited_requests: 1 });
    // The wait for the earlier request is reported apart from the measuring.
    expect(quiet.report().drain_ms).toBeGreaterThan(0);
    expect(quiet.report().held_ms).toBeGreaterThan(0);
  });

  it("lets sign-ins through and never holds a request back longer than its bound", async () => {
    seen.length = 0;
    const quiet = new QuietWindows();
    const [measurer, other] = [client(quiet), client(quiet)];
    let signedIn = false;
    await measurer.quietly(async () => {
      await other.send(get("sign-in"), { signIn: true });
      signedIn = true;
    });
    expect(signedIn).toBe(true);
    expect(quiet.stats.waited_requests).toBe(0);
    // A window that outlasts the bound: the other's request goes out anyway, before the window closes.
    const bounded = new QuietWindows({ maxWaitMs: 150, maxDrainMs: 150 });
    const [holder, waiter] = [client(bounded), client(bounded)];
    let answeredInside = false;
    await holder.quietly(async () => {
      await waiter.send(get("bounded"));
      answeredInside = true;
    });
    expect(answeredInside).toBe(true);
    expect(bounded.stats.waited_requests).toBe(1);
  });

  it("lets a window open after a request whose limiter failed: it never entered the target", async () => {
    seen.length = 0;
    const quiet = new QuietWindows({ maxWaitMs: 5000, maxDrainMs: 5000 });
    const failing = new HttpClient({
      limiter: { acquire: () => Promise.reject(new Error("the queue's database is gone")) },
      budget: new RequestBudget(100),
      writesAllowed: false,
      quiet,
    });
    await expect(failing.send(get("lost"))).rejects.toThrow(/database is gone/);
    const measurer = client(quiet);
    await measurer.quietly(() => measurer.send(get("after")));
    // Nothing in flight was left behind to drain.
    expect(quiet.report().drain_ms).toBeLessThan(1000);
  });

  it("takes turns: requests that waited for one window go before the same holder's next window", async () => {
    seen.length = 0;
    const quiet = new QuietWindows();
    const [measurer, other] = [client(quiet), client(quiet)];
    let waiting: Promise<unknown> | undefined;
    await measurer.quietly(async () => {
      waiting = other.send(get("waiting"));
      await measurer.send(get("first", 50));
    });
    await measurer.quietly(() => measurer.send(get("second", 50)));
    await waiting;
    const order = seen.filter((each) => each.event === "start").map((each) => each.who);
    expect(order).toEqual(["first", "waiting", "second"]);
  });
});

describe("bursts", () => {
  it("are never split by a window: the window waits until the whole burst has answered", async () => {
    seen.length = 0;
    const quiet = new QuietWindows();
    const [racer, measurer] = [client(quiet), client(quiet)];
    const burst = racer.together(async () => {
      await racer.send(get("race-1", 100));
      // The window is asked for while the burst is under way, between two of its requests.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await racer.send(get("race-2", 100));
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    const window = measurer.quietly(() => measurer.send(get("measured")));
    await Promise.all([burst, window]);
    const order = seen.filter((each) => each.event === "start").map((each) => each.who);
    expect(order).toEqual(["race-1", "race-2", "measured"]);
  });

  it("lets machine-heavy work start only between windows, and never waits past the bound", async () => {
    const quiet = new QuietWindows({ maxWaitMs: 200, maxDrainMs: 200 });
    const holder = {};
    let release: () => void = () => {};
    const measuring = quiet.hold(holder, () => new Promise<void>((resolve) => (release = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 10));
    let started = false;
    const waiting = quiet.betweenWindows().then(() => {
      started = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(started).toBe(false);
    release();
    await measuring;
    await waiting;
    expect(started).toBe(true);

    // A window that outlives its purpose costs the waiting work its bound, not the run.
    const stuck = quiet.hold(holder, () => new Promise<void>((resolve) => setTimeout(resolve, 1_000)));
    await new Promise((resolve) => setTimeout(resolve, 10));
    const before = performance.now();
    await quiet.betweenWindows();
    expect(performance.now() - before).toBeLessThan(600);
    await stuck;
    const idle = performance.now();
    await quiet.betweenWindows();
    expect(performance.now() - idle).toBeLessThan(50);
  });
});
