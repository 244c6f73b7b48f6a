import { describe, expect, it } from "vitest";
import { channelsOf } from "../../src/probes/realtime/channels.ts";
import { connectionRequest } from "../../src/probes/realtime/socket-auth.ts";
import type { ProbeRun } from "../../src/probes/session/probe-run.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";

// A plain WebSocket channel the profile says nothing about: the credential is offered where such servers
// usually read it, all at once, so a channel reading it from a header or a first message is not taken for
// one that refuses everybody. A profile that names the placement is followed exactly.

function runWith(login: Record<string, unknown>, websocket?: Record<string, unknown>): ProbeRun {
  const profile = TargetProfileSchema.parse({
    name: "t",
    source: {},
    environment: { mode: "none" },
    auth: { login },
    ...(websocket ? { websocket } : {}),
  });
  return {
    context: { target: undefined, shared: new Map() },
    target: { profile },
    map: { channels: [{ path: "/live/feed", seen_in: ["source"] }] },
  } as unknown as ProbeRun;
}

function requestFor(run: ProbeRun, token: string | undefined) {
  const [channel] = channelsOf(run).channels;
  return connectionRequest(
    "ws://app.test/live/feed",
    channel!.placements,
    token === undefined ? undefined : { token },
    run.target.profile,
  );
}

describe("plain WebSocket placements", () => {
  it("offers a bearer token in the Authorization header, the usual query parameters and one first message", () => {
    const run = runWith({ kind: "json", endpoint: "POST /login", apply_as: "header:Authorization" });
    const request = requestFor(run, "t1");
    expect(request.headers).toEqual({ authorization: "Bearer t1" });
    expect(request.query).toEqual({ token: "t1", access_token: "t1" });
    expect(request.firstMessage).toEqual({ payload: { token: "t1", access_token: "t1" } });
  });

  it("offers an API key in its own header and under that header's name", () => {
    const run = runWith({ kind: "api_key", apply_as: "header:X-API-Key" });
    const request = requestFor(run, "k1");
    expect(request.headers).toEqual({ "x-api-key": "k1" });
    expect(request.query).toMatchObject({ api_key: "k1" });
    expect(request.firstMessage?.payload).toMatchObject({ api_key: "k1", token: "k1" });
  });

  it("sends nothing for an anonymous socket", () => {
    const run = runWith({ kind: "api_key", apply_as: "header:X-API-Key" });
    expect(requestFor(run, undefined)).toEqual({ url: "ws://app.test/live/feed", headers: {}, query: {} });
  });

  it("follows the profile's placement when it names one", () => {
    const run = runWith(
      { kind: "json", endpoint: "POST /login" },
      { paths: ["/live/feed"], auth: "query:jwt" },
    );
    const request = requestFor(run, "t1");
    expect(request.query).toEqual({ jwt: "t1" });
    expect(request.headers).toEqual({});
    expect(request.firstMessage).toBeUndefined();
  });
});
