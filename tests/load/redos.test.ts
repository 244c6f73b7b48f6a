import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeRedos, replayLengths } from "../../src/probes/load/redos.ts";
import { probeContext, profileFor, systemMapFor } from "../fixtures/probe-harness.ts";

// Email checks behind three reads: one that backtracks (its time doubles with each letter of a run that
// cannot match, as a pattern with nested repetition does — played with a timer, so a busy test machine
// cannot blur it), a linear pattern, and a handler that is slow whatever it is given. Only the first is
// ReDoS; the slow one is not, since its time does not grow with the input.

const LINEAR = /^[^@\s]+@[^@\s]+\.[a-z]{2,}$/;
/** Milliseconds a backtracking check spends on `value`: doubling per letter of a run that cannot match. */
const backtracking = (value: string) => (/^a+!$/.test(value) ? 2 ** (value.length - 22) : 0);
let server: http.Server;
let baseUrl: string;
const longest: Record<string, number> = {};

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const email = url.searchParams.get("email") ?? "";
    longest[url.pathname] = Math.max(longest[url.pathname] ?? 0, email.length);
    const answer = (valid: boolean) =>
      response
        .writeHead(valid ? 200 : 400, { "content-type": "application/json" })
        .end(JSON.stringify({ valid }));
    if (url.pathname === "/api/check-after-price" && !url.searchParams.has("price"))
      response
        .writeHead(400, { "content-type": "application/json" })
        .end(JSON.stringify({ message: "Missing parameter 'price'" }));
    else if (url.pathname === "/api/check-nested" || url.pathname === "/api/check-after-price")
      setTimeout(() => answer(false), backtracking(email));
    else if (url.pathname === "/api/check-linear") answer(LINEAR.test(email));
    else setTimeout(() => answer(LINEAR.test(email)), 400);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function checksAt(paths: string[]) {
  const check = {
    get: {
      parameters: [{ name: "email", in: "query", required: true, schema: { type: "string" } }],
      responses: { "200": { description: "ok" }, "400": { description: "invalid" } },
    },
  };
  const document = {
    openapi: "3.0.3",
    info: { title: "checks", version: "1" },
    paths: Object.fromEntries(paths.map((path) => [path, check])),
  };
  const map = systemMapFor({ target: "checks", baseUrl, document });
  const profile = profileFor({
    name: "checks",
    source: {},
    environment: { mode: "external", base_url: baseUrl },
  });
  return probeContext({ profile, map, agent: "LOAD" });
}

describe("probe_redos", () => {
  it("reports the pattern that backtracks, with a test that fails on it, and stops growing the input there", async () => {
    const context = checksAt(["/api/check-nested", "/api/check-linear", "/api/check-slow"]);
    const outcome = await probeRedos(context, {});
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["GET /api/check-nested"]);
    const [finding] = outcome.candidates;
    expect(finding).toMatchObject({ defect_class: "slow-endpoint", domain: "performance" });
    expect(finding!.title).toMatch(/backtracks on email.*ReDoS/);
    // The replay sends its own input: it needs none of the probe's data.
    expect(finding!.reproduction.needs_probe_data).toBeUndefined();
    // The generated test fails while the pattern backtracks.
    const uri = finding!.evidence.find((item) => item.kind === "failing_test")?.uri ?? "";
    const file = path.join(context.artifactsDir, uri.replace(/^artifact:\/\/[^/]+\//, ""));
    const replay = await promisify(execFile)(process.execPath, ["--test", file], {
      env: { ...process.env, QAAS_BASE_URL: baseUrl },
    }).then(
      () => "passed",
      (error: { stdout?: string }) => error.stdout ?? "failed",
    );
    expect(replay).toMatch(/must check \d+ characters of email in about the time of \d+/);
    const fields = outcome.stats.fields as Array<{ field: string; result: string }>;
    expect(Object.fromEntries(fields.map((entry) => [entry.field, entry.result]))).toEqual({
      "GET /api/check-nested query email": "redos",
      "GET /api/check-linear query email": "no slowdown",
      "GET /api/check-slow query email": "slow without growth",
    });
    // Bounded: the input stopped growing at the first slow answer, far below the lengths that freeze.
    expect(longest["/api/check-nested"]).toBeLessThanOrEqual(33);
  }, 60_000);

  it("adds the field an answer says is missing, so the pattern checked after it is reached", async () => {
    const outcome = await probeRedos(checksAt(["/api/check-after-price"]), {});
    if (typeof outcome === "string") throw new Error(outcome);
    expect(outcome.candidates.map((draft) => draft.location.value)).toEqual(["GET /api/check-after-price"]);
    expect(outcome.stats.fields).toEqual([
      expect.objectContaining({ result: "redos", added_fields: ["price"] }),
    ]);
  }, 60_000);

  /** A warm climb from its times at successive lengths, two letters apart, ending at 28. */
  const climb = (...times: number[]) =>
    times.map((ms, index) => ({ length: 28 - 2 * (times.length - 1 - index), ms }));

  it("sets the replayed inputs apart by how steeply the pattern grows, within a bound past the probe's input", () => {
    // Quadrupling every two letters: four letters apart is sixteen times, already decisive.
    expect(replayLengths(climb(25, 100, 410), 28)).toEqual({ length: 28, span: 4 });
    // Not quite doubling every two letters: eight letters apart, and the longer input two steps further.
    expect(replayLengths(climb(56, 97, 171), 28)).toEqual({ length: 32, span: 8 });
    // Never more than four letters past the slowest input the probe sent, however shallow the growth.
    expect(replayLengths(climb(150, 160), 28).length).toBe(32);
  });
});
