import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PlaybookSession } from "../../src/agents/playbook.ts";
import socket from "../../src/agents/playbooks/socket.ts";
import { ArrivalGate } from "../../src/probes/realtime/arrival-gate.ts";
import { causeObservedEvent } from "../../src/probes/realtime/event-source.ts";
import type { RealtimeRun } from "../../src/probes/realtime/realtime-run.ts";
import { closeAll, connect, credentialOf, openRealtimeRun } from "../../src/probes/realtime/realtime-run.ts";
import type { FixtureApp } from "./fixture-app.ts";
import { startFixtureApp } from "./fixture-app.ts";
import { socketContext } from "./probe-harness.ts";

// SOCKET runs its realtime probes at once. What they learn of a channel is shared as a promise (one
// computation however many ask at once), the presence measurement takes its turn through the run's arrival
// gate, and the playbook really starts them together (measured by calls in flight, never by time).

let app: FixtureApp;
beforeAll(async () => {
  app = await startFixtureApp();
});
afterAll(async () => {
  await app.close();
});

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("what realtime probes of one run learn of a channel", () => {
  it("is computed once when two probes ask at the same moment", async () => {
    const context = socketContext(app);
    const open = async (tool: string): Promise<RealtimeRun> => {
      const realtime = await openRealtimeRun(context, tool, { channel: "/ws/presence", wait_ms: 200 });
      if (typeof realtime === "string") throw new Error(realtime);
      return realtime;
    };
    const runs = await Promise.all([open("ws_probe_ordering"), open("ws_probe_reconnect")]);
    try {
      const answers = await Promise.all(
        runs.map(async (realtime) => {
          const owner = realtime.users[0]!;
          const { credential } = await credentialOf(realtime, owner);
          const channel = realtime.channels[0]!;
          const ownerSocket = await connect(realtime, channel, "owner", credential);
          await ownerSocket.settle(50, 300);
          return causeObservedEvent(realtime, channel, { user: owner.name, socket: ownerSocket });
        }),
      );
      expect(answers).toEqual([undefined, undefined]);
      // One of them tried the writes; the other waited for its answer instead of trying them all again.
      const tried = runs.map((realtime) => realtime.driver.events.length).sort();
      expect(tried[0]).toBe(0);
      expect(tried[1]).toBeGreaterThan(0);
      expect(runs.flatMap((realtime) => realtime.run.notes).join("\n")).toMatch(
        /tried by an earlier realtime probe/,
      );
    } finally {
      await Promise.all(runs.map(closeAll));
    }
  }, 20_000);
});

describe("the arrival gate", () => {
  it("lets channel work run side by side, and an arrival measurement only once the others' work ended", async () => {
    const gate = new ArrivalGate();
    const [first, second, measurer] = [{}, {}, {}];
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstWork = gate.share(first, async () => {
      order.push("first starts");
      await new Promise<void>((resolve) => (releaseFirst = resolve));
      order.push("first ends");
    });
    await tick();
    // The measurer is in its own channel work when it asks to be alone: that never blocks it.
    const measuring = gate.share(measurer, () =>
      gate.alone(measurer, async () => {
        order.push("measures");
      }),
    );
    await tick();
    const secondWork = gate.share(second, async () => {
      order.push("second starts");
    });
    await tick();
    expect(order).toEqual(["first starts"]);
    releaseFirst();
    await Promise.all([firstWork, measuring, secondWork]);
    expect(order).toEqual(["first starts", "first ends", "measures", "second starts"]);
  });

  it("never waits on a holder that is itself waiting to be alone", async () => {
    const gate = new ArrivalGate();
    const [one, two] = [{}, {}];
    const order: string[] = [];
    await Promise.all(
      [one, two].map((holder, index) =>
        gate.share(holder, () =>
          gate.alone(holder, async () => {
            order.push(`alone ${index}`);
            await tick();
          }),
        ),
      ),
    );
    expect(order.sort()).toEqual(["alone 0", "alone 1"]);
  });

  it("gives up waiting after its bound rather than hang", async () => {
    const gate = new ArrivalGate({ maxDrainMs: 20, maxWaitMs: 20, graceMs: 0 });
    const [busy, measurer] = [{}, {}];
    let release!: () => void;
    const work = gate.share(busy, () => new Promise<void>((resolve) => (release = resolve)));
    await tick();
    await expect(gate.alone(measurer, async () => "measured")).resolves.toBe("measured");
    release();
    await work;
  });
});

describe("the SOCKET playbook", () => {
  it("starts the realtime probes together, and reconnect and backpressure alone once they answered", async () => {
    let inFlight = 0;
    const started: Array<{ tool: string; inFlight: number }> = [];
    const session: PlaybookSession = {
      agent: "SOCKET",
      task: {},
      async call<Data>(name: string) {
        if (name === "get_system_map") return { ok: true, data: { channels: [{ path: "/ws" }] } as Data };
        inFlight += 1;
        started.push({ tool: name, inFlight });
        await tick();
        await tick();
        inFlight -= 1;
        return { ok: true, data: { candidates: [], stats: {} } as Data };
      },
      log: () => {},
      signal: new AbortController().signal,
    };
    await socket(session);
    expect(started.slice(-2)).toEqual([
      { tool: "ws_probe_reconnect", inFlight: 1 },
      { tool: "ws_probe_backpressure", inFlight: 1 },
    ]);
    expect(Math.max(...started.map((entry) => entry.inFlight))).toBe(3);
  });
});
