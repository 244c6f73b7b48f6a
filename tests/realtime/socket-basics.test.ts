import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Frame } from "../../src/probes/realtime/connection.ts";
import {
  detectSequenceField,
  identityNeedles,
  isControlFrame,
  mentions,
  sequenceProblems,
} from "../../src/probes/realtime/frames.ts";
import { resumeHintFromDocument, resumeHintFromFrames } from "../../src/probes/realtime/probe-reconnect.ts";
import {
  connectionRequest,
  expiredToken,
  forgedTokens,
  parsePlacements,
  socketUrl,
} from "../../src/probes/realtime/socket-auth.ts";
import { TargetProfileSchema } from "../../src/targets/profile-schema.ts";
import { serverOfTool, TOOL_CATALOG } from "../../src/tools/catalog.ts";
import { codeTools } from "../../src/tools/servers/code-server.ts";
import { wsTools } from "../../src/tools/servers/ws-server.ts";

const frame = (value: unknown, at = 0): Frame => {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return {
    at,
    direction: "in",
    text,
    json: typeof value === "string" ? undefined : value,
    bytes: text.length,
  };
};

const profile = (applyAs = "header:Authorization") =>
  TargetProfileSchema.parse({
    name: "t",
    source: {},
    environment: { mode: "none" },
    auth: { login: { kind: "json", endpoint: "POST /login", apply_as: applyAs, scheme: "Token" } },
  });

describe("token placement", () => {
  it("puts the credential where the profile says, and nothing at all for an anonymous socket", () => {
    const url = socketUrl("https://app.test/base/", "/ws/live");
    expect(url).toBe("wss://app.test/base/ws/live");
    expect(
      connectionRequest(url, parsePlacements("query:access_token"), { token: "t 1" }, profile()),
    ).toEqual({
      url: "wss://app.test/base/ws/live?access_token=t%201",
      headers: {},
      query: { access_token: "t 1" },
    });
    expect(
      connectionRequest(url, parsePlacements("header:Authorization"), { token: "abc" }, profile()),
    ).toMatchObject({ headers: { authorization: "Token abc" } });
    expect(
      connectionRequest(
        url,
        parsePlacements("header:Cookie"),
        { token: "abc", cookies: { csrf: "z" } },
        profile("cookie:sid"),
      ),
    ).toMatchObject({ headers: { cookie: "csrf=z; sid=abc" } });
    expect(
      connectionRequest(url, parsePlacements("message:auth.token"), { token: "abc" }, profile()),
    ).toMatchObject({ firstMessage: { payload: { auth: { token: "abc" } } } });
    expect(connectionRequest(url, parsePlacements(undefined), undefined, profile())).toEqual({
      url,
      headers: {},
      query: {},
    });
  });

  it("sends a cookie session as a browser does, without empty tokens in the other places", () => {
    const url = socketUrl("http://app.test", "/ws/board");
    const placements = parsePlacements("header:Authorization, query:token, message:token");
    expect(connectionRequest(url, placements, { token: "", cookies: { sid: "s1" } }, profile())).toEqual({
      url,
      headers: { cookie: "sid=s1" },
      query: {},
    });
  });

  it("places a socket.io credential in the handshake auth, a first event, and the web session's cookies", () => {
    const url = socketUrl("http://app.test", "/socket.io");
    const placements = parsePlacements("auth:session.token, event:authenticate:jwt, query:t, nonsense");
    expect(placements.map((placement) => placement.kind)).toEqual(["auth", "event", "query"]);
    const request = connectionRequest(url, placements, { token: "abc", cookies: { sid: "s1" } }, profile());
    expect(request).toMatchObject({
      auth: { session: { token: "abc" } },
      query: { t: "abc" },
      headers: { cookie: "sid=s1" },
      firstMessage: { event: "authenticate", payload: { jwt: "abc" } },
    });
    expect(
      connectionRequest(url, parsePlacements("event:login"), { token: "abc" }, profile()).firstMessage,
    ).toEqual({ event: "login", payload: "abc" });
  });

  it("forges an expired JWT from a real one, and an unrelated string for an opaque token", () => {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const real = `${encode({ alg: "HS256" })}.${encode({ sub: "7", exp: 9_999_999_999 })}.signature`;
    const forged = expiredToken(real, 1_000_000);
    const payload = JSON.parse(Buffer.from(forged.split(".")[1]!, "base64url").toString("utf8"));
    expect(payload).toMatchObject({ sub: "7", exp: 1_000_000 - 3600 });
    const opaque = "tok-1-k3j4h5g6f7";
    const other = expiredToken(opaque, 1_000_000);
    expect(other).toHaveLength(opaque.length);
    expect(other.includes("k3j4")).toBe(false);
  });

  it("forges a JWT's own claims under a signature that is not its own, and unsigned, and nothing from an opaque token", () => {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const signature = "c2lnbmF0dXJlLW9mLXRoZS1zZXJ2ZXI";
    const real = `${encode({ alg: "HS256", typ: "JWT" })}.${encode({ sub: "7", exp: 9_999_999_999 })}.${signature}`;
    const [forged, unsigned] = forgedTokens(real);
    expect(forged!.label).toBe("forged signature");
    const [head, body, mark] = forged!.token.split(".");
    expect(`${head}.${body}`).toBe(real.split(".").slice(0, 2).join("."));
    expect(mark).toHaveLength(signature.length);
    expect([...mark!].some((char, index) => char === signature[index])).toBe(false);
    expect(unsigned!.label).toBe("alg none");
    const parts = unsigned!.token.split(".");
    expect(JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8"))).toEqual({
      alg: "none",
      typ: "JWT",
    });
    expect(parts[1]).toBe(body);
    expect(parts[2]).toBe("");
    expect(forgedTokens("tok-1-k3j4h5g6f7")).toEqual([]);
    expect(forgedTokens(`a.${encode({ sub: 1 })}.b`)).toEqual([]);
    expect(forgedTokens(undefined)).toEqual([]);
  });
});

describe("reading frames", () => {
  it("recognises an event by its planted marker or by the id of the created record, not by chance digits", () => {
    const needles = { markers: ["qaas-ab12cd"], id: "42" };
    expect(mentions(frame({ type: "created", data: { title: "qaas-ab12cd" } }), needles)).toBe(true);
    expect(mentions(frame({ type: "created", data: { note_id: 42 } }), { markers: [], id: "42" })).toBe(true);
    expect(
      mentions(frame({ type: "created", count: 42, data: { id: 420 } }), { markers: [], id: "42" }),
    ).toBe(false);
    expect(isControlFrame(frame({ type: "heartbeat" }))).toBe(true);
    expect(isControlFrame(frame({ type: "note.created" }))).toBe(false);
  });

  it("finds the numbering field and where it goes back, repeats or jumps", () => {
    const frames = [1, 2, 4, 3, 4].map((seq) => frame({ type: "x", seq }));
    expect(detectSequenceField([frame({ type: "hello" }), ...frames])).toBe("seq");
    expect(
      sequenceProblems(frames, "seq").map(
        (problem) => `${problem.kind} ${problem.previous}->${problem.value}`,
      ),
    ).toEqual(["gap 2->4", "backwards 4->3", "repeat 4->4"]);
    expect(detectSequenceField([frame({ type: "x" }), frame({ type: "y" })])).toBeUndefined();
  });

  it("names a signed-in user by login, email and name from the sign-in answer", () => {
    expect(
      identityNeedles("alice@a.test", {
        token: "t",
        user: { id: 1, name: "Alice Anders", email: "alice@a.test", role: "x" },
      }),
    ).toEqual(["alice@a.test", "Alice Anders"]);
  });

  it("reads a resume promise from a greeting or from the API document", () => {
    expect(resumeHintFromFrames([frame({ type: "hello", resume: { param: "since" } })])).toBe("since");
    expect(resumeHintFromFrames([frame({ type: "hello", replay: "cursor" })])).toBe("cursor");
    expect(resumeHintFromFrames([frame({ type: "hello", last_event_id: 12 })])).toBe("last_event_id");
    expect(resumeHintFromFrames([frame({ type: "hello", user: { name: "x" } })])).toBeUndefined();
    const document = {
      info: { description: "Connect to /ws/feed?last_event_id=<n> to resume after a drop." },
    };
    expect(resumeHintFromDocument(document, "/ws/feed")).toBe("last_event_id");
    expect(resumeHintFromDocument(document, "/ws/other")).toBeUndefined();
  });
});

describe("the ws and code servers", () => {
  it("implement exactly their catalog names, each with an object input a model can be shown", () => {
    for (const [server, tools] of [
      ["ws", wsTools],
      ["code", codeTools],
    ] as const) {
      expect(tools.map((tool) => tool.name)).toEqual([...TOOL_CATALOG[server]]);
      for (const tool of tools) {
        expect(serverOfTool(tool.name)).toBe(tool.server);
        const schema = z.toJSONSchema(tool.input, { unrepresentable: "any", io: "input" }) as {
          type?: string;
        };
        expect(schema.type, tool.name).toBe("object");
      }
    }
  });
});
