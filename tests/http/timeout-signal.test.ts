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

beforeAll(async () => {
  server = http.createServer((_request, response) => {
    setTimeout(() => response.end("too late"), 1_500);
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
