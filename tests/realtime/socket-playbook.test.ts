import { afterAll, beforeAll, describe, expect, it } from "vitest";
import socket from "../../src/agents/playbooks/socket.ts";
import { envelopeTools } from "../../src/tools/servers/envelope-server.ts";
import { wsTools } from "../../src/tools/servers/ws-server.ts";
import { fakeRunContext, runPlaybookDirectly, testAgent } from "../support/fake-run-context.ts";
import type { FixtureApp } from "./fixture-app.ts";
import { fixtureMap, fixtureTarget, startFixtureApp } from "./fixture-app.ts";

let app: FixtureApp;
beforeAll(async () => {
  app = await startFixtureApp();
});
afterAll(async () => {
  await app.close();
});

describe("the SOCKET playbook", () => {
  it("runs every probe over the mapped channels and emits exactly the confirmed findings", async () => {
    const channels = ["/ws/open"];
    const map = {
      ...fixtureMap(app.baseUrl),
      channels: channels.map((path) => ({ path, seen_in: ["source"] })),
    };
    const context = fakeRunContext({
      target: fixtureTarget(app.baseUrl, { paths: ["/ws/open"] }),
      systemMap: map,
      agent: testAgent({ name: "SOCKET" }),
    });
    const calls = await runPlaybookDirectly(socket, [...wsTools, ...envelopeTools], context);
    const probes = calls.filter((call) => call.tool !== "emit_envelope");
    expect(probes.map((call) => [call.tool, call.result.ok]).sort()).toEqual([
      ["get_system_map", true],
      ["ws_probe_auth", true],
      ["ws_probe_authorization", true],
      ["ws_probe_backpressure", true],
      ["ws_probe_ordering", true],
      ["ws_probe_reconnect", true],
    ]);
    // Reconnect and backpressure need the target to themselves: they run once the others have answered.
    expect(probes.slice(-2).map((call) => call.tool)).toEqual([
      "ws_probe_reconnect",
      "ws_probe_backpressure",
    ]);
    const envelopes = context.readEnvelopes();
    expect(
      envelopes
        .map((envelope) => `${envelope.defect_class} ${envelope.location.value} ${envelope.tracker.state}`)
        .sort(),
    ).toEqual(["ws-authorization /ws/open unfiled", "ws-unauthenticated /ws/open unfiled"]);
    expect(
      envelopes.every((envelope) => envelope.discovered_by === "SOCKET" && envelope.domain === "realtime"),
    ).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(app.openSockets()).toBe(0);
  });

  it("stops without probing when no map is pinned", async () => {
    const context = fakeRunContext({
      target: fixtureTarget(app.baseUrl),
      agent: testAgent({ name: "SOCKET" }),
    });
    const calls = await runPlaybookDirectly(socket, [...wsTools, ...envelopeTools], context);
    expect(calls.map((call) => call.tool)).toEqual(["get_system_map"]);
  });
});
