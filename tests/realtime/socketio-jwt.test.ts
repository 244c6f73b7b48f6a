import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { quietWindowsOf } from "../../src/probes/http/quiet-window.ts";
import { runLimiter, targetConcurrency } from "../../src/probes/http/run-http.ts";
import type { JwtSocketIoApp } from "./apps/socketio-jwt/server.ts";
import { startJwtSocketIoApp } from "./apps/socketio-jwt/server.ts";
import { probe, summary } from "./probe-harness.ts";
import { socketIoContext } from "./socketio-harness.ts";

// socket.io namespaces of a service whose sessions are HS256 JWTs: a namespace that reads the claims and
// their expiry but never the signature, or trusts `alg: none`, refuses a token with no or a random value
// and an expired one, yet takes the owner's own claims under a forged signature or none. And a namespace
// that batches changes and flushes them newest first, while another agent of the run keeps measuring.

const APP_ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "apps", "socketio-jwt");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("socket.io over JWT sessions", () => {
  let app: JwtSocketIoApp;
  let onUpdate: (() => void) | undefined;
  beforeAll(async () => {
    app = await startJwtSocketIoApp({ onUpdate: () => onUpdate?.() });
  });
  afterAll(async () => {
    await app?.close();
  });

  it("reports the namespaces that take a forged signature or an unsigned token, not the verifying one", async () => {
    const answer = await probe(
      app,
      "ws_probe_auth",
      { channel: "/live" },
      socketIoContext(app.baseUrl, APP_ROOT),
    );
    expect(summary(answer).filed.sort()).toEqual([
      "ws-unauthenticated /live /any-alg",
      "ws-unauthenticated /live /expiry-only",
    ]);
    const byName = new Map(answer.stats.channels.map((channel) => [channel.channel, channel]));
    expect(byName.get("/live")).toMatchObject({
      accepted_without_valid_token: [],
      event_caused: "create /api/notes",
    });
    expect(byName.get("/live namespace /expiry-only")).toMatchObject({
      // It never reads the signature, so an unsigned token gets in as well.
      accepted_without_valid_token: ["forged signature token", "alg none token"],
      unauthenticated_received: ["forged signature token: event", "alg none token: event"],
    });
    expect(byName.get("/live namespace /any-alg")).toMatchObject({
      accepted_without_valid_token: ["alg none token"],
      unauthenticated_received: ["alg none token: event"],
    });
    for (const name of ["/live namespace /batched", "/live namespace /queued"]) {
      expect(byName.get(name)).toMatchObject({ accepted_without_valid_token: [] });
    }
    const draft = answer.candidates.find(
      (candidate) => candidate.location.related?.[0]?.value === "/any-alg",
    );
    expect(draft?.reproduction.steps[0]).toMatch(/a token that is not valid \(alg none token\)/);
  }, 60_000);

  const probeOrdering = (context: ReturnType<typeof socketIoContext>, namespace: string) =>
    probe(app, "ws_probe_ordering", { channel: "/live", namespace, events: 6 }, context);

  it("reports changes flushed newest first, though another agent's measurement windows keep opening", async () => {
    const context = socketIoContext(app.baseUrl, APP_ROOT);
    const windows = quietWindowsOf(context);
    // Another agent of the run measures a request of its own (150 ms) whenever the target has just applied
    // a change: a probe request that waits for its window is sent one window after the change before it.
    const measurer = {};
    const measuring: Array<Promise<unknown>> = [];
    onUpdate = () => {
      measuring.push(windows.hold(measurer, () => sleep(150)));
    };
    try {
      const reversed = await probeOrdering(context, "/batched");
      expect(summary(reversed)).toEqual({ filed: ["ws-ordering /live /batched"], held: [] });
      expect(reversed.stats.channels[0]).toMatchObject({ sequence_field: null });
      const inOrder = await probeOrdering(context, "/queued");
      expect(inOrder.candidates).toEqual([]);
      expect(inOrder.stats.channels[0]).toMatchObject({ sequence_field: null });
    } finally {
      onUpdate = undefined;
      await Promise.all(measuring);
    }
  }, 90_000);

  it("reports changes flushed newest first, though other probes' requests keep every slot of the run busy", async () => {
    const context = socketIoContext(app.baseUrl, APP_ROOT);
    const windows = quietWindowsOf(context);
    const limiter = runLimiter(context);
    // Other probes of the run send slow requests (150 ms) through every slot whenever the target has just
    // applied a change: a probe request that queues for a slot is sent one batch window after the change
    // before it, and a batch never holds two changes.
    const neighbour = {};
    const sending: Array<Promise<void>> = [];
    const busy = async (): Promise<void> => {
      const leave = await windows.enter(neighbour);
      const slot = await limiter.acquire();
      await sleep(150);
      slot();
      leave();
    };
    onUpdate = () => {
      for (let index = 0; index < targetConcurrency(context.target?.profile); index += 1)
        sending.push(busy());
    };
    try {
      const reversed = await probeOrdering(context, "/batched");
      expect(summary(reversed)).toEqual({ filed: ["ws-ordering /live /batched"], held: [] });
      // How far apart the changes left is kept, to tell a clean burst from one too slow to show a batch.
      const bursts = reversed.stats.channels[0]?.bursts as Array<Record<string, unknown>>;
      expect(bursts[0]).toMatchObject({ kind: "sequential", median_gap_ms: expect.any(Number) });
    } finally {
      onUpdate = undefined;
      await Promise.all(sending);
    }
  }, 90_000);
});
