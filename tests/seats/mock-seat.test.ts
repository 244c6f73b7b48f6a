import { describe, expect, it } from "vitest";
import { MockSeat } from "../../src/seats/mock-seat.ts";
import { type SeatResult, TransientSeatError } from "../../src/seats/seat.ts";
import { err } from "../../src/tools/result.ts";
import { recordingSeatRequest } from "./fakes/seat-request.ts";

describe("MockSeat", () => {
  it("throws 'not implemented' by default, after recording the call", async () => {
    const seat = new MockSeat();
    const request = recordingSeatRequest();
    await expect(seat.run(request)).rejects.toThrow("MockSeat: not implemented");
    expect(seat.calls).toEqual([request]);
  });

  it("runs a function behaviour", async () => {
    const result: SeatResult = {
      outcome: "completed",
      turns: 0,
      usage: { inputTokens: 1, outputTokens: 2 },
      costUsd: 0.5,
      warnings: [],
    };
    const seat = new MockSeat({ run: async () => result });
    await expect(seat.run(recordingSeatRequest())).resolves.toBe(result);
  });

  it("plays a script through callTool, so answers (denials included) come from the runner", async () => {
    const seat = new MockSeat({
      run: {
        script: [
          { tool: "http_get", input: { path: "/" } },
          { usage: { inputTokens: 100, outputTokens: 10 }, costUsd: 0.01 },
          { tool: "write_file", input: { path: "x" } },
          { usage: { inputTokens: 50 } },
          { finish: "done" },
        ],
      },
    });
    const request = recordingSeatRequest({ answers: { write_file: err("denied by write-scope") } });

    const result = await seat.run(request);

    expect(result).toEqual({
      outcome: "completed",
      turns: 2,
      usage: { inputTokens: 150, outputTokens: 10 },
      costUsd: 0.01,
      finalText: "done",
      warnings: [],
    });
    expect(request.toolCalls.map((call) => call.name)).toEqual(["http_get", "write_file"]);
    expect(seat.toolCalls[1]).toEqual({
      agent: "TESTER",
      tool: "write_file",
      input: { path: "x" },
      result: { ok: false, error: "denied by write-scope" },
    });
  });

  it("hears the stop hook once and goes on with the script; a second refusal lets it go", async () => {
    const heeds = new MockSeat({
      run: { script: [{ finish: "early" }, { tool: "emit_envelope", input: {} }, { finish: "filed" }] },
    });
    const heedsRequest = recordingSeatRequest({ mustCall: ["emit_envelope"] });
    await expect(heeds.run(heedsRequest)).resolves.toMatchObject({
      outcome: "completed",
      finalText: "filed",
    });
    expect(heeds.stopChecks.map((check) => check.allow)).toEqual([false, true]);

    const stuck = new MockSeat({ run: { script: [{ finish: "early" }, { finish: "still early" }] } });
    const stuckRequest = recordingSeatRequest({ mustCall: ["emit_envelope"] });
    await expect(stuck.run(stuckRequest)).resolves.toMatchObject({ outcome: "stopped" });
    expect(stuckRequest.stopChecks).toHaveLength(2);
  });

  it("stops at maxTurns", async () => {
    const seat = new MockSeat({
      run: {
        script: [
          { tool: "a", input: {} },
          { tool: "b", input: {} },
          { tool: "c", input: {} },
        ],
      },
    });
    const request = recordingSeatRequest({ maxTurns: 2 });
    await expect(seat.run(request)).resolves.toMatchObject({ outcome: "max_turns", turns: 2 });
    expect(request.toolCalls.map((call) => call.name)).toEqual(["a", "b"]);
  });

  it("plays one behaviour per call, e.g. a transient failure and then a success", async () => {
    const seat = new MockSeat({
      run: [{ script: [{ throw: new TransientSeatError("HTTP 429") }] }, { script: [{ finish: "ok" }] }],
    });
    await expect(seat.run(recordingSeatRequest())).rejects.toBeInstanceOf(TransientSeatError);
    await expect(seat.run(recordingSeatRequest())).resolves.toMatchObject({ outcome: "completed" });
    await expect(seat.run(recordingSeatRequest())).rejects.toThrow(/no behaviour scripted for call 3/);
    expect(seat.calls).toHaveLength(3);
  });
});
