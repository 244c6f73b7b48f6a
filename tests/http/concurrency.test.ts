import { describe, expect, it } from "vitest";
import { workInOrder } from "../../src/probes/http/concurrency.ts";

// Work on a few items at once, decisions in the items' order: the test holds each item's work open until
// it chooses to finish it, so which one finishes first is the test's to say, never the clock's.

interface Held {
  item: string;
  stop: AbortSignal;
  finish(value: string | undefined): void;
}

function harness(items: string[], options: { width: number; cap: number; stopAt?: string }) {
  const held: Held[] = [];
  const started: string[] = [];
  const decided: string[] = [];
  let running = 0;
  let mostRunning = 0;
  const done = workInOrder(items, {
    width: options.width,
    cap: options.cap,
    work: (item, stop) =>
      new Promise<string | undefined>((resolve) => {
        started.push(item);
        running += 1;
        mostRunning = Math.max(mostRunning, running);
        held.push({
          item,
          stop,
          finish: (value) => {
            running -= 1;
            resolve(value);
          },
        });
      }),
    decide: async (item, result) => {
      decided.push(`${item}=${result}`);
      return item === options.stopAt;
    },
  });
  /** Lets every pending callback run. */
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  /** Ends an item's work: with its result, or with none (`skipped`: it did nothing). */
  const finish = async (item: string, skipped = false) => {
    held.find((entry) => entry.item === item)!.finish(skipped ? undefined : item.toUpperCase());
    await settle();
  };
  return { done, started, decided, held, finish, settle, most: () => mostRunning };
}

describe("workInOrder: a few at once, decided in order", () => {
  it("decides in the items' order though later items finish first, never more than `width` at once", async () => {
    const run = harness(["a", "b", "c", "d", "e"], { width: 3, cap: 15 });
    await run.settle();
    expect(run.started).toEqual(["a", "b", "c"]);
    await run.finish("c");
    await run.finish("b");
    expect(run.decided).toEqual([]);
    expect(run.started).toEqual(["a", "b", "c", "d", "e"]);
    await run.finish("a");
    expect(run.decided).toEqual(["a=A", "b=B", "c=C"]);
    await run.finish("e");
    await run.finish("d");
    expect(await run.done).toBe(5);
    expect(run.decided).toEqual(["a=A", "b=B", "c=C", "d=D", "e=E"]);
    expect(run.most()).toBe(3);
  });

  it("starts no more than the cap, and an item that did nothing does not count towards it", async () => {
    const run = harness(["a", "b", "c", "d", "e", "f"], { width: 2, cap: 3 });
    await run.settle();
    await run.finish("a", true);
    await run.finish("b");
    await run.finish("c");
    await run.finish("d");
    expect(await run.done).toBe(3);
    expect(run.started).toEqual(["a", "b", "c", "d"]);
    expect(run.decided).toEqual(["b=B", "c=C", "d=D"]);
  });

  it("stops at the decision that says so: nothing more starts, later results are dropped, the rest is told to stop", async () => {
    const run = harness(["a", "b", "c", "d", "e"], { width: 3, cap: 15, stopAt: "b" });
    await run.settle();
    await run.finish("c");
    await run.finish("b");
    expect(run.started).toEqual(["a", "b", "c", "d", "e"]);
    await run.finish("a");
    expect(run.decided).toEqual(["a=A", "b=B"]);
    expect(run.held.filter((entry) => entry.stop.aborted).map((entry) => entry.item)).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
    ]);
    // Work still under way when the stop came is waited for (its tab closed), never left behind.
    let finished = false;
    void run.done.then(() => {
      finished = true;
    });
    await run.settle();
    expect(finished).toBe(false);
    await run.finish("d");
    await run.finish("e");
    expect(await run.done).toBe(5);
    expect(run.decided).toEqual(["a=A", "b=B"]);
  });

  it("with one at a time, decides each item before the one after next starts", async () => {
    const run = harness(["a", "b", "c"], { width: 1, cap: 15 });
    await run.settle();
    expect(run.started).toEqual(["a"]);
    await run.finish("a");
    expect(run.started).toEqual(["a", "b"]);
    expect(run.decided).toEqual(["a=A"]);
    await run.finish("b");
    await run.finish("c");
    expect(await run.done).toBe(3);
  });
});
