import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { check } from "../../src/guardrails/check.ts";
import { wsTools } from "../../src/tools/servers/ws-server.ts";
import { testAgent } from "../support/fake-run-context.ts";
import type { FixtureApp } from "./fixture-app.ts";
import { fixtureMap, startFixtureApp } from "./fixture-app.ts";
import { probe, socketContext, summary } from "./probe-harness.ts";

let app: FixtureApp;
beforeAll(async () => {
  app = await startFixtureApp();
});
afterAll(async () => {
  await app.close();
});

describe("ws_probe_auth", () => {
  it("reports a channel that streams a tenant's private records to sockets without a valid token", async () => {
    const answer = await probe(app, "ws_probe_auth", { channel: "/ws/open" });
    expect(summary(answer)).toEqual({ filed: ["ws-unauthenticated /ws/open"], held: [] });
    const [draft] = answer.candidates;
    expect(draft).toMatchObject({ domain: "realtime", severity: "critical", confidence: 0.9 });
    expect(draft!.summary).toMatch(/no token, invalid token, expired token/);
    expect(draft!.summary).toMatch(/answers 401 to anonymous/);
    expect(draft!.evidence.map((item) => item.kind)).toEqual(["artifact", "exchange", "exchange"]);
  });

  it("reports a presence channel that tells anonymous sockets who came online, though it scopes signed-in ones", async () => {
    const answer = await probe(app, "ws_probe_auth", { channel: "/ws/presence" });
    expect(summary(answer)).toEqual({ filed: ["ws-unauthenticated /ws/presence"], held: [] });
    expect(answer.candidates[0]!.summary).toMatch(/another tenant is not told/);
  });

  it.each([
    [
      "/ws/secure",
      "refuses the upgrade (401)",
      ["no token: 401", "invalid token: 401", "expired token: 401"],
    ],
    [
      "/ws/closing",
      "accepts, then closes with 4401",
      ["no token: 4401", "invalid token: 4401", "expired token: 4401"],
    ],
    ["/ws/leaky", "refuses the upgrade (401)", ["no token: 401", "invalid token: 401", "expired token: 401"]],
  ])("finds nothing on %s, which %s", async (channel, _how, refused) => {
    const answer = await probe(app, "ws_probe_auth", { channel });
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.channels[0]).toMatchObject({ refused, event_caused: "create /api/notes" });
  });

  it("finds nothing on a public channel carrying public data, even though anonymous sockets receive it", async () => {
    const answer = await probe(app, "ws_probe_auth", { channel: "/ws/public" });
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.channels[0]).toMatchObject({ event_caused: "create /api/announcements" });
    expect(answer.stats.notes.join("\n")).toMatch(/shows it to anonymous: public data, not a finding/);
  });
});

describe("channels to probe", () => {
  it("come from the target's source when neither the profile nor the map lists any", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "qaas-ws-source-"));
    fs.writeFileSync(
      path.join(root, "server.ts"),
      `import { WebSocketServer } from "ws";\nexport const sockets = new WebSocketServer({ port: 0, path: "/ws/open" });\n`,
    );
    const context = socketContext(app);
    context.target!.profile.websocket = undefined;
    context.target!.root = root;
    context.setSystemMap({ ...fixtureMap(app.baseUrl), channels: [] });
    const answer = await probe(app, "ws_probe_auth", {}, context);
    expect(summary(answer)).toEqual({ filed: ["ws-unauthenticated /ws/open"], held: [] });
  });
});

describe("ws_probe_authorization", () => {
  it("reports a channel that sends one tenant's records to another tenant the API refuses", async () => {
    const answer = await probe(app, "ws_probe_authorization", { channel: "/ws/leaky" });
    expect(summary(answer)).toEqual({ filed: ["ws-authorization /ws/leaky"], held: [] });
    expect(answer.candidates[0]).toMatchObject({ severity: "high", confidence: 0.9 });
    expect(answer.candidates[0]!.summary).toMatch(
      /other-tenant \(bob\) \(GET \/api\/notes\/\{id\} answers 404 to bob\)/,
    );
  });

  it("finds nothing on a tenant-scoped channel, where the owner alone receives the event", async () => {
    const answer = await probe(app, "ws_probe_authorization", { channel: "/ws/secure" });
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.channels[0]).toMatchObject({ events_caused: ["create /api/notes"], received_by: [] });
  });

  it("reports a channel that scopes one kind of event but sends events about records nested under it to every tenant", async () => {
    // Comments are created under a note and read by their own id, which answers `200 null` to outsiders:
    // only the list under the note (404 for bob) tells that bob may not read what he was sent.
    const context = socketContext(app, { teammate: true });
    const answer = await probe(app, "ws_probe_authorization", { channel: "/ws/threads" }, context);
    expect(summary(answer)).toEqual({ filed: ["ws-authorization /ws/threads"], held: [] });
    const [draft] = answer.candidates;
    expect(draft).toMatchObject({ severity: "high", confidence: 0.9 });
    expect(draft!.summary).toMatch(/created a \/api\/notes\/\{id\}\/comments record/);
    expect(draft!.summary).toMatch(/GET \/api\/notes\/\{id\}\/comments answers 404 to bob/);
    // The teammate receiving it is correct and is not part of the finding.
    expect(draft!.summary).not.toMatch(/carol/);
    expect(answer.stats.channels[0]!.events_caused).toEqual([
      "create /api/notes",
      "create /api/notes/{id}/comments",
    ]);
  });

  it("finds nothing where nested events are tenant-scoped too, though a teammate receives them", async () => {
    const context = socketContext(app, { teammate: true });
    const answer = await probe(app, "ws_probe_authorization", { channel: "/ws/discussions" }, context);
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.channels[0]).toMatchObject({
      events_caused: ["create /api/notes", "create /api/notes/{id}/comments"],
      received_by: [],
    });
    expect(answer.stats.notes.join("\n")).toMatch(
      /same-role \(carol\) receives \/api\/notes\/\{id\}\/comments events and GET \/api\/comments\/\{id\} shows it to carol: allowed/,
    );
  });

  it("reports a tenant-scoped channel whose events carry the author's password hash and API key, which the API hides", async () => {
    const context = socketContext(app);
    const answer = await probe(app, "ws_probe_authorization", { channel: "/ws/chatty" }, context);
    expect(summary(answer)).toEqual({ filed: ["ws-authorization /ws/chatty"], held: [] });
    const [draft] = answer.candidates;
    expect(draft!.title).toBe(
      "WebSocket /ws/chatty sends password_hash, api_key in its /api/notes events, which the API never shows",
    );
    expect(draft!.summary).toMatch(/bcrypt password hash at data\.author\.password_hash/);
    expect(draft!.summary).toMatch(/POST \/api\/notes, GET \/api\/notes\/\d+/);
    expect(answer.stats.channels[0]).toMatchObject({
      received_by: [],
      credentials_in_events: ["data.author.password_hash", "data.author.api_key"],
    });
    // The evidence shows where the hash starts, never the whole of it.
    expect(draft!.reproduction.steps.join("\n")).toMatch(/password_hash = \$2b\$12\$… \(60 characters\)/);
  });

  it("finds nothing where events embed only the author's id and name", async () => {
    const answer = await probe(app, "ws_probe_authorization", { channel: "/ws/courteous" });
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.channels[0]).toMatchObject({ events_caused: ["create /api/notes"], received_by: [] });
  });

  it("finds nothing where no write makes the channel speak (a broadcast nobody receives proves nothing)", async () => {
    const context = socketContext(app);
    const answer = await probe(app, "ws_probe_authorization", { channel: "/ws/presence" }, context);
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.notes.join("\n")).toMatch(
      /no write the probe may send made the owner's socket receive an event \(.*no frame about it/,
    );
    // The run remembers the silent channel: the next probe makes no write to find out again.
    const again = await probe(app, "ws_probe_auth", { channel: "/ws/presence" }, context);
    expect(again.stats.notes.join("\n")).toMatch(/tried by an earlier realtime probe of this run/);
    expect((again.stats as unknown as { events_caused: number }).events_caused).toBe(0);
  });
});

describe("live probes on a target that forbids writes", () => {
  it("are allowed to run (they declare a GET of the base URL) and never send a write themselves", async () => {
    const context = socketContext(app, { allowWrites: false });
    const agent = testAgent({ name: "SOCKET", tools: wsTools.map((tool) => tool.name) });
    for (const tool of wsTools)
      expect(check(agent, tool, { channel: "/ws/open" }, context)).toEqual({ allowed: true });
    const before = app.requests.length;
    const answer = await probe(app, "ws_probe_auth", { channel: "/ws/open" }, context);
    expect(answer.candidates).toEqual([]);
    expect(answer.stats.writes_allowed).toBe(false);
    expect(answer.stats.notes.join("\n")).toMatch(/does not allow writes/);
    const writes = app.requests
      .slice(before)
      .filter((request) => !request.startsWith("GET") && request !== "POST /api/login");
    expect(writes).toEqual([]);
  });

  it("are refused by the guardrail for a target with no base URL", () => {
    const context = socketContext(app);
    context.target!.profile.environment.base_url = undefined;
    context.setSystemMap(undefined);
    const agent = testAgent({ name: "SOCKET", tools: ["ws_probe_auth"] });
    expect(check(agent, wsTools[0]!, {}, context)).toMatchObject({ allowed: false, rule: "external-writes" });
  });
});
