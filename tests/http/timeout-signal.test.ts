import http from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seatFetch } from "../../src/seats/model-loop.ts";
import { timeoutSignal } from "../../src/timeout-signal.ts";

// Requests to a target or a model give up after their timeout, also while the garbage collector runs: a
// timeout signal held only weakly (Node 20's AbortSignal.timeout inside AbortSignal.any) is collected and
// never fires, and a server that never answers then holds the whole run. The collector runs every 20 ms.

setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

let server: http.Server;
let url: string;

/** Keeps the event loop busy for `ms`, as a synchronous step elsewhere in the process does. */
function holdLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

beforeAll(async () => {
  server = http.createServer((request, response) => {
    if (request.url === "/held") {
      // The answer is written at once, but the process is held past the client's timeout first.
      holdLoop(700);
      response.end("prompt");
      return;
    }
    setTimeout(() => response.end("too late"), 4_000);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("seatFetch's timeout", () => {
  it.each([
    { name: "with the caller's own signal", signal: () => new AbortController().signal },
    { name: "without one", signal: () => undefined },
  ])("aborts a slow answer with a TimeoutError $name, whatever the collector does", async ({ signal }) => {
    const fetcher = seatFetch({ timeoutSeconds: 0.2, isLocal: true });
    const collecting = setInterval(collectGarbage, 20);
    try {
      const given = signal();
      const outcome = await fetcher(url, given ? { signal: given } : {}).then(
        (response) => response.text(),
        (error: Error) => error.name,
      );
      expect(outcome).toBe("TimeoutError");
    } finally {
      clearInterval(collecting);
    }
  });
});

describe("timeoutSignal", () => {
  it("aborts with a TimeoutError while following another signal, with nothing else holding it", async () => {
    const collecting = setInterval(collectGarbage, 20);
    try {
      // The combined signal is held here, as a request holds its signal; its sources are not.
      const combined = timeoutSignal(150, new AbortController().signal);
      const reason = await new Promise<unknown>((resolve) => {
        combined.addEventListener("abort", () => resolve(combined.reason), { once: true });
      });
      expect((reason as Error).name).toBe("TimeoutError");
    } finally {
      clearInterval(collecting);
    }
  });
});

describe("timeoutSignal's followed signal", () => {
  it("aborts with the caller's reason before the timeout", () => {
    const caller = new AbortController();
    const signal = timeoutSignal(60_000, caller.signal);
    expect(signal.aborted).toBe(false);
    caller.abort(new Error("run stopped"));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe("run stopped");
  });
});

describe("timeoutSignal after the event loop was held", () => {
  it("lets an answer that arrived while the loop was held be read, not called a timeout", async () => {
    const outcome = await fetch(`${url}held`, { signal: timeoutSignal(200) }).then(
      (response) => response.text(),
      (error: Error) => error.name,
    );
    expect(outcome).toBe("prompt");
  });

  it("still gives up on a server that has not answered once the grace is over", async () => {
    const signal = timeoutSignal(200);
    const pending = fetch(url, { signal }).then(
      (response) => response.text(),
      (error: Error) => error.name,
    );
    holdLoop(500);
    expect(await pending).toBe("TimeoutError");
  });
});
