import http from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seatFetch } from "../../src/seats/model-loop.ts";

// A model seat gives up on a request after its timeout, also while the garbage collector runs: a timeout
// signal held only weakly (Node 20's AbortSignal.timeout inside AbortSignal.any) is collected and never
// fires, and a model that never answers then holds the whole run. The collector runs every 20 ms here.

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
