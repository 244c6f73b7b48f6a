import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Semaphore } from "../../src/probes/http/concurrency.ts";
import { HttpClient, RequestBudget } from "../../src/probes/http/http-client.ts";
import { startTextServer, type TextServer } from "../support/text-server.ts";

// A race needs its requests at the target at one moment. Under the run's cap, with other agents' requests
// holding slots, a burst that took its slots one by one would leave a request at a time; it takes them
// together instead, and waits (first in line) until that many are free at once.

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("Semaphore: slots taken together", () => {
  it("serves a group once enough slots are free at once, and later arrivals wait behind it", async () => {
    const slots = new Semaphore(4);
    const held = [await slots.acquire(), await slots.acquire()];
    let group: Array<() => void> | undefined;
    void slots.acquireMany(3).then((taken) => {
      group = taken;
    });
    let single: (() => void) | undefined;
    void slots.acquire().then((taken) => {
      single = taken;
    });
    await settle();
    // Two free slots are not three: the group waits, and so does the single that came after it.
    expect(group).toBeUndefined();
    expect(single).toBeUndefined();
    held[0]!();
    await settle();
    expect(group).toHaveLength(3);
    expect(single).toBeUndefined();
    group![0]!();
    await settle();
    expect(single).toBeDefined();
  });

  it("never asks for more than the limit", async () => {
    const slots = new Semaphore(2);
    const taken = await slots.acquireMany(5);
    expect(taken).toHaveLength(2);
  });
});

describe("HttpClient.together under a busy cap", () => {
  /** Requests the server keeps open until the test lets them go, and the burst's arrivals. */
  const hung: http.ServerResponse[] = [];
  const burst: Array<{ response: http.ServerResponse; inFlight: number }> = [];
  let burstInFlight = 0;
  let server: TextServer;
  let baseUrl: string;

  beforeAll(async () => {
    server = await startTextServer((request, _text, response) => {
      if (request.url?.startsWith("/hang")) {
        hung.push(response);
        return;
      }
      burstInFlight += 1;
      burst.push({ response, inFlight: burstInFlight });
      // The burst's requests are answered once all three are at the server together.
      if (burst.length === 3)
        for (const each of burst) {
          burstInFlight -= 1;
          each.response.writeHead(200).end("{}");
        }
    });
    baseUrl = server.baseUrl;
  });
  afterAll(() => server.close());

  it("sends no request of the burst until all of it can leave, then sends it at once", async () => {
    const limiter = new Semaphore(4);
    const client = () => new HttpClient({ limiter, budget: new RequestBudget(20), writesAllowed: true });
    const [other, racer] = [client(), client()];
    const others = [
      other.send({ method: "GET", url: `${baseUrl}/hang` }),
      other.send({ method: "GET", url: `${baseUrl}/hang` }),
    ];
    while (hung.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));

    const raced = racer.together(
      () =>
        Promise.all(
          [1, 2, 3].map((n) => racer.send({ method: "POST", url: `${baseUrl}/race?n=${n}`, body: "{}" })),
        ),
      3,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Two slots were free all along: taken one by one, two of the three would have left already.
    expect(burst).toHaveLength(0);

    hung[0]!.writeHead(200).end("{}");
    const exchanges = await raced;
    expect(exchanges.map((exchange) => exchange.response?.status)).toEqual([200, 200, 200]);
    expect(Math.max(...burst.map((each) => each.inFlight))).toBe(3);

    hung[1]!.writeHead(200).end("{}");
    await Promise.all(others);
  });
});
