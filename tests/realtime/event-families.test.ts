import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/map/system-map.ts";
import type { ProbedChannel } from "../../src/probes/realtime/channels.ts";
import { channelWords } from "../../src/probes/realtime/channels.ts";
import { EventDriver } from "../../src/probes/realtime/event-driver.ts";
import { openProbeRun } from "../../src/probes/session/probe-run.ts";
import { undocumentedMap } from "../fixtures/probe-harness.ts";
import { fakeRunContext, testAgent } from "../support/fake-run-context.ts";
import { socketIoContext } from "./socketio-harness.ts";

// Which collection's create the realtime probes try first to make a channel speak. A socket.io server lists
// the events of all its namespaces together, so they cannot tell one namespace's collection from another's:
// the namespace's own name must, down to the words it shares with a collection's whole path.

const BASE = "http://127.0.0.1:9";
const body = {
  request_body: {
    content_type: "application/json",
    required: true,
    schema: { type: "object", properties: { title: { type: "string" } } },
  },
};
const operation = (method: string, path: string, extra: Record<string, unknown> = {}): Operation =>
  ({
    method,
    path,
    security: "required",
    parameters: path.includes("{id}")
      ? [{ name: "id", in: "path", required: true, schema: { type: "integer" } }]
      : [],
    responses: {},
    seen_in: ["source"],
    documented: false,
    ...extra,
  }) as Operation;

const COLLECTIONS = [
  "/api/logistics/molds",
  "/api/stock/patients",
  "/api/travel/donors",
  "/api/travel/patients",
  "/api/travel/threads",
  "/app/api/events/ledgers",
  "/app/api/fleet/refunds",
  "/app/api/harbor/claims",
  "/app/api/library/molds",
  "/api/order-items",
];

function driver(): EventDriver {
  const operations = COLLECTIONS.flatMap((collection) => [
    operation("POST", collection, body),
    operation("GET", `${collection}/{id}`),
  ]);
  const loaded = socketIoContext(BASE, "/nonexistent").target!;
  const context = fakeRunContext({
    target: loaded,
    systemMap: undocumentedMap("families", BASE, [
      operation("POST", "/api/login", { security: "public" }),
      ...operations,
    ]),
    agent: testAgent({ name: "SOCKET" }),
  });
  const run = openProbeRun(context, "ws_probe_auth");
  if (typeof run === "string") throw new Error(run);
  return new EventDriver(run, () => 0);
}

const namespace = (name: string): ProbedChannel => ({
  name: `/socket.io namespace ${name}`,
  path: "/socket.io",
  protocol: "socket.io",
  namespace: name,
  // Every namespace's events, as the source lists them for the server.
  events: [
    "claim:changed",
    "donor:changed",
    "ledger:changed",
    "mold:changed",
    "patient:changed",
    "refund:changed",
  ],
  placements: [],
});

describe("the collection a channel is about", () => {
  it("is the one whose path the namespace names most of, though the server's events name them all", () => {
    const { words, hints } = channelWords(namespace("/library-molds"));
    const order = driver()
      .families(words, undefined, hints)
      .map((family) => family.collection);
    expect(order.slice(0, 2)).toEqual(["/app/api/library/molds", "/api/logistics/molds"]);
    const travel = channelWords(namespace("/travel-patients"));
    expect(driver().families(travel.words, undefined, travel.hints)[0]!.collection).toBe(
      "/api/travel/patients",
    );
  });

  it("matches a hyphenated collection as a whole and a plain WebSocket path by its segments", () => {
    expect(driver().families("/ws/order-items")[0]!.collection).toBe("/api/order-items");
    expect(driver().families("/ws/refunds")[0]!.collection).toBe("/app/api/fleet/refunds");
  });

  it("puts the collection that spoke before first, and lets events rank the rest when the namespace names none", () => {
    const root = channelWords(namespace("/"));
    const preferred = driver().families(root.words, "/api/travel/threads", root.hints);
    expect(preferred[0]!.collection).toBe("/api/travel/threads");
    const ranked = driver()
      .families(root.words, undefined, root.hints)
      .map((family) => family.collection);
    expect(ranked.slice(-2).sort()).toEqual(["/api/order-items", "/api/travel/threads"]);
  });
});
