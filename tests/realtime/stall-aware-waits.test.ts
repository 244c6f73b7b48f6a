import { describe, expect, it } from "vitest";
import { QuietWindows } from "../../src/probes/http/quiet-window.ts";
import type { OpenOptions } from "../../src/probes/realtime/connection.ts";
import { ObservedConnection, patientDelay, stallExtension } from "../../src/probes/realtime/connection.ts";
import { frameWait } from "../../src/probes/realtime/event-source.ts";

// While another agent measures inside a window, a single-threaded target may be busy for it: a socket's
// wait for a frame then extends by the time spent measuring, instead of concluding that nothing came.

/** A connection fed by the test: `deliver` is a frame from the server. */
class ScriptedConnection extends ObservedConnection {
  constructor(options: Pick<OpenOptions, "clock">) {
    super("scripted", "ws://scripted", "websocket", options.clock, 100);
  }
  get isOpen(): boolean {
    return true;
  }
  send(): void {}
  pause(): void {}
  resume(): void {}
  async close(): Promise<void> {}
  async drop(): Promise<void> {}
  deliver(text: string): void {
    this.logFrame("in", text, text.length);
  }
}

const started = performance.now();
const clock = () => Math.round(performance.now() - started);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("waits that honour measurement windows", () => {
  it("finds a frame that arrives after the wait would have ended, when a window was held meanwhile", async () => {
    const windows = new QuietWindows();
    const measurer = {};
    const socket = new ScriptedConnection({ clock });
    socket.stalls = () => windows.heldMs();
    const waiting = socket.waitFor((frame) => frame.text === "late", 100);
    // Another agent measures for 250 ms; the server answers the socket only once that is over.
    await windows.hold(measurer, () => sleep(250));
    socket.deliver("late");
    expect((await waiting)?.text).toBe("late");
  });

  it("still ends a wait on time when no window was held", async () => {
    const windows = new QuietWindows();
    const socket = new ScriptedConnection({ clock });
    socket.stalls = () => windows.heldMs();
    const waiting = socket.waitFor((frame) => frame.text === "late", 100);
    await sleep(250);
    socket.deliver("late");
    expect(await waiting).toBeUndefined();
  });

  it("counts only the time spent measuring inside windows", async () => {
    const windows = new QuietWindows();
    expect(windows.heldMs()).toBe(0);
    await windows.hold({}, () => sleep(60));
    const afterOne = windows.heldMs();
    expect(afterOne).toBeGreaterThan(0);
    await sleep(60);
    expect(windows.heldMs()).toBe(afterOne);
  });

  it("grants each window's time once, up to a bound", () => {
    let held = 0;
    const extension = stallExtension(() => held);
    expect(extension()).toBe(0);
    held = 300;
    expect(extension()).toBe(300);
    expect(extension()).toBe(0);
    held = 100_000;
    expect(extension()).toBe(14_700);
    expect(extension()).toBe(0);
  });

  it("extends a pause by the windows held during it", async () => {
    let held = 0;
    const order: string[] = [];
    const pause = patientDelay(50, () => held).then(() => order.push("pause over"));
    await sleep(20);
    held = 150;
    await sleep(80);
    order.push("original end passed");
    await pause;
    expect(order).toEqual(["original end passed", "pause over"]);
  });
});

describe("the wait for the event a create causes", () => {
  it("is the run's wait while the target answers quickly", () => {
    expect(frameWait(700, 40, false)).toBe(700);
  });

  it("stretches to twice the create's answer time when the target is slow", () => {
    expect(frameWait(700, 900, false)).toBe(1800);
  });

  it("is longer for a write the channel already spoke about, and bounded", () => {
    expect(frameWait(700, 40, true)).toBe(2100);
    expect(frameWait(700, 4000, true)).toBe(5000);
  });
});
