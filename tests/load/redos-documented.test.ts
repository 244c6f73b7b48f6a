import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeRedos } from "../../src/probes/load/redos.ts";
import { nestedRepetition } from "../../src/probes/load/redos-pattern.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

describe("nestedRepetition", () => {
  it("finds a group that repeats a repetition, and a character its inner repetition takes", () => {
    const cases: Array<[string, string | undefined]> = [
      // A shop's mail check: the optional `[_]+` is passed over for the letters every step needs.
      [String.raw`^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}[a-z]{2,3}$`, "a"],
      [String.raw`^\+?([0-9]+[ -]?)+$`, "0"],
      [String.raw`^(\d+)+$`, "1"],
      [String.raw`^(\w+\s?)*$`, "a"],
      ["^([A-Z0-9]+-?)+$", "A"],
      [String.raw`^(?:[a-z0-9]+\.?){1,}$`, "a"],
      ["^(([a-z])+)+$", "a"],
      // One way to match a run: nothing to report.
      [String.raw`^[a-z0-9._-]+@[a-z]+\.[a-z]{2,}$`, undefined],
      ["^(abc)+$", undefined],
      ["^([a-z])+$", undefined],
      ["^([a-z]{1,3}){2}$", undefined],
      ["^[a-z]+(_[a-z]+)*$", undefined],
      ["^([^@]+)+@", undefined],
    ];
    expect(cases.map(([pattern]) => nestedRepetition(pattern)?.letter)).toEqual(
      cases.map(([, letter]) => letter),
    );
  });
});

// A document that states its patterns: `code` (a name that says no format) is checked with a pattern that
// backtracks on runs of capitals, `sku` with a linear one. Only the first is worth the probe's requests.
describe("probe_redos on documented patterns", () => {
  let server: http.Server;
  let baseUrl: string;
  const probed = new Set<string>();

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://localhost");
      for (const name of url.searchParams.keys())
        if (url.searchParams.get(name)!.length > 12) probed.add(name);
      const code = url.searchParams.get("code") ?? url.searchParams.get("email") ?? "";
      const backtracks = url.pathname === "/api/lookup" ? /^a+!$/ : /^A+!$/;
      const wait = backtracks.test(code) ? 2 ** (code.length - 22) : 0;
      setTimeout(
        () => response.writeHead(400, { "content-type": "application/json" }).end('{"error":"bad code"}'),
        wait,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("times the field whose documented pattern backtracks, with a character that pattern repeats", async () => {
    const parameter = (name: string, pattern: string) => ({
      name,
      in: "query",
      required: true,
      schema: { type: "string", pattern },
    });
    const document = {
      openapi: "3.0.3",
      info: { title: "vouchers", version: "1" },
      paths: {
        "/api/vouchers/redeem": {
          get: {
            parameters: [parameter("sku", "^[A-Z0-9-]+$"), parameter("code", "^([A-Z0-9]+-?)+$")],
            responses: { "200": { description: "ok" }, "400": { description: "invalid" } },
          },
        },
      },
    };
    const map = systemMapFor({ target: "vouchers", baseUrl, document });
    const profile = profileFor({
      name: "vouchers",
      source: {},
      environment: { mode: "external", base_url: baseUrl },
    });
    const outcome = await probeRedos(probeContext({ profile, map, agent: "LOAD" }), {});
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.title)).toEqual([
      expect.stringMatching(/^GET \/api\/vouchers\/redeem backtracks on code/),
    ]);
    expect(outcome.candidates[0]!.summary).toContain('a run of "A"');
    expect([...probed]).toEqual(["code"]);
  }, 60_000);

  it("tries one field of each name before a second, and sign-ins' account fields last", async () => {
    const signIn = (path: string) => [
      path,
      {
        post: {
          requestBody: {
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: { email: { type: "string" }, password: { type: "string" } },
                },
              },
            },
          },
          responses: { "401": { description: "refused" } },
        },
      },
    ];
    const document = {
      openapi: "3.0.3",
      info: { title: "sign-ins", version: "1" },
      paths: {
        ...Object.fromEntries(["/api/login", "/api/session", "/api/admin/login"].map(signIn)),
        "/api/lookup": {
          get: {
            parameters: [{ name: "email", in: "query", required: true, schema: { type: "string" } }],
            responses: { "400": { description: "invalid" } },
          },
        },
      },
    };
    const map = systemMapFor({ target: "sign-ins", baseUrl, document });
    const profile = profileFor({
      name: "sign-ins",
      source: {},
      environment: { mode: "external", base_url: baseUrl, allow_writes: true },
    });
    const outcome = await probeRedos(probeContext({ profile, map, agent: "LOAD" }), { max_fields: 2 });
    if (typeof outcome === "string") throw new Error(outcome);
    const fields = outcome.stats.fields as Array<{ field: string }>;
    expect(fields.map((entry) => entry.field)).toEqual([
      "GET /api/lookup query email",
      "POST /api/login body email",
    ]);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["GET /api/lookup"]);
  }, 60_000);
});
