import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SeatRef } from "../../src/config/agent-schema.ts";
import { QaasError } from "../../src/errors.ts";
import { createWorkerSeat } from "../../src/seats/create-seat.ts";
import { OpenAICompatibleSeat } from "../../src/seats/openai-compatible-seat.ts";
import { TransientSeatError } from "../../src/seats/seat.ts";
import { err, ok } from "../../src/tools/result.ts";
import {
  type FakeModelServer,
  type ScriptedReply,
  startOpenAIFakeServer,
} from "./fakes/openai-fake-server.ts";
import { recordingSeatRequest, seatTool } from "./fakes/seat-request.ts";

const KEY_VARIABLE = "QAAS_SEAT_TEST_OPENAI_LLM_KEY";

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown[]; tool_call_id?: string }>;
  tools?: Array<{ type: string; function: { name: string; description: string; parameters: unknown } }>;
}

let server: FakeModelServer | undefined;

async function seatFor(script: ScriptedReply[], overrides: Partial<SeatRef> = {}) {
  server = await startOpenAIFakeServer(script);
  const ref: SeatRef = {
    backend: "openai-compatible",
    model: "fake-model",
    base_url: `${server.url}/v1`,
    is_local: true,
    api_key_env: KEY_VARIABLE,
    price: { input_per_mtok: 3, output_per_mtok: 15 },
    ...overrides,
  };
  return { server, seat: createWorkerSeat(ref).seat };
}

const bodyOf = (fake: FakeModelServer, index: number): ChatBody => fake.requests[index]?.body as ChatBody;

beforeEach(() => {
  process.env[KEY_VARIABLE] = "sk-test-key";
});

afterEach(async () => {
  delete process.env[KEY_VARIABLE];
  await server?.close();
  server = undefined;
});

describe("OpenAICompatibleSeat", () => {
  it("calls a tool, then another, then finishes; tool results (a denial included) reach the next request", async () => {
    const { server: fake, seat } = await seatFor([
      { tool: "http_get", input: { path: "/items" }, usage: { input: 100, output: 20 } },
      { tool: "write_file", input: { path: "db/migrations/1.sql" }, usage: { input: 200, output: 30 } },
      { text: "Done: one finding.", usage: { input: 300, output: 50 } },
    ]);
    const request = recordingSeatRequest({
      tools: [
        seatTool("http_get", { path: { type: "string" } }),
        seatTool("write_file", { path: { type: "string" } }),
      ],
      answers: {
        http_get: ok({ status: 200, body: "[]" }),
        write_file: err("denied by forbidden-path: migrations are off limits"),
      },
    });

    const result = await seat.run(request);

    expect(result).toEqual({
      outcome: "completed",
      turns: 3,
      usage: { inputTokens: 600, outputTokens: 100 },
      costUsd: (600 * 3 + 100 * 15) / 1_000_000,
      finalText: "Done: one finding.",
      warnings: [],
    });
    expect(request.toolCalls).toEqual([
      { name: "http_get", input: { path: "/items" } },
      { name: "write_file", input: { path: "db/migrations/1.sql" } },
    ]);
    expect(fake.requests.map((recorded) => recorded.path)).toEqual([
      "/v1/chat/completions",
      "/v1/chat/completions",
      "/v1/chat/completions",
    ]);
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer sk-test-key");

    const first = bodyOf(fake, 0);
    expect(first.model).toBe("fake-model");
    expect(first.messages).toEqual([
      { role: "system", content: "You are a test agent." },
      { role: "user", content: "Test the thing." },
    ]);
    expect(first.tools?.map((entry) => entry.function.name)).toEqual(["http_get", "write_file"]);
    expect(first.tools?.[0]?.function.parameters).toEqual(
      seatTool("http_get", { path: { type: "string" } }).inputSchema,
    );

    const secondToolMessage = bodyOf(fake, 1).messages.at(-1);
    expect(secondToolMessage?.role).toBe("tool");
    expect(JSON.parse(String(secondToolMessage?.content))).toEqual({
      ok: true,
      data: { status: 200, body: "[]" },
    });
    const thirdToolMessage = bodyOf(fake, 2).messages.at(-1);
    expect(JSON.parse(String(thirdToolMessage?.content))).toEqual({
      ok: false,
      error: "denied by forbidden-path: migrations are off limits",
    });
  });

  it("tells the model the stop hook's reason once, then lets a stuck agent go", async () => {
    const { server: fake, seat } = await seatFor([{ text: "All done." }, { text: "Really done." }]);
    const request = recordingSeatRequest({ tools: [seatTool("emit_envelope")], mustCall: ["emit_envelope"] });

    const result = await seat.run(request);

    expect(result.outcome).toBe("stopped");
    expect(result.turns).toBe(2);
    expect(result.finalText).toBe("Really done.");
    expect(request.stopChecks).toHaveLength(2);
    expect(fake.requests).toHaveLength(2);
    expect(bodyOf(fake, 1).messages.slice(-2)).toEqual([
      { role: "assistant", content: "All done." },
      { role: "user", content: "You must call emit_envelope before finishing." },
    ]);
  });

  it("completes when the model heeds the reason and calls the required tool", async () => {
    const { seat } = await seatFor([
      { text: "Nothing to report." },
      { tool: "emit_envelope", input: {} },
      { text: "Filed." },
    ]);
    const request = recordingSeatRequest({ tools: [seatTool("emit_envelope")], mustCall: ["emit_envelope"] });

    const result = await seat.run(request);

    expect(result.outcome).toBe("completed");
    expect(result.turns).toBe(3);
    expect(request.stopChecks.map((check) => check.allow)).toEqual([false, true]);
  });

  it("ends the run at once when callTool itself throws, rather than showing the model a tool error", async () => {
    const { server: fake, seat } = await seatFor([
      { tool: "http_get", input: { path: "/a" } },
      { text: "must not be requested" },
    ]);
    const request = recordingSeatRequest({
      tools: [seatTool("http_get", { path: { type: "string" } })],
      answers: {
        http_get: () => {
          throw new Error("ledger is gone");
        },
      },
    });
    await expect(seat.run(request)).rejects.toThrow("ledger is gone");
    expect(fake.requests).toHaveLength(1);
  });

  it("ends with max_turns when the model is still calling tools at the limit", async () => {
    const { server: fake, seat } = await seatFor([
      { tool: "http_get", input: { path: "/a" } },
      { tool: "http_get", input: { path: "/b" } },
      { text: "never reached" },
    ]);
    const request = recordingSeatRequest({
      tools: [seatTool("http_get", { path: { type: "string" } })],
      maxTurns: 2,
    });

    const result = await seat.run(request);

    expect(result.outcome).toBe("max_turns");
    expect(result.turns).toBe(2);
    expect(fake.requests).toHaveLength(2);
    expect(request.stopChecks).toHaveLength(0);
  });

  it.each([
    { name: "429", reply: { status: 429, message: "slow down" } as ScriptedReply },
    { name: "503", reply: { status: 503, message: "overloaded" } as ScriptedReply },
    { name: "a connection reset", reply: { reset: true } as ScriptedReply },
  ])("maps $name to a TransientSeatError, without retrying itself", async ({ reply }) => {
    const { server: fake, seat } = await seatFor([reply, { text: "a retry would have got this" }]);
    const failure = await seat.run(recordingSeatRequest()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TransientSeatError);
    expect(fake.requests).toHaveLength(1);
  });

  it("maps a model that does not answer in time to a TransientSeatError", async () => {
    const { seat } = await seatFor([{ text: "too late", delayMs: 2_000 }], { timeout_seconds: 0.2 });
    const failure = await seat.run(recordingSeatRequest()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TransientSeatError);
    expect(String((failure as Error).message)).toMatch(/did not answer in time/);
  });

  it("maps 401 to a plain error that names the seat and the fix", async () => {
    const { seat } = await seatFor([{ status: 401, message: "invalid api key" }]);
    const failure = await seat.run(recordingSeatRequest()).catch((error: unknown) => error);
    expect(failure).not.toBeInstanceOf(TransientSeatError);
    expect(failure).toBeInstanceOf(QaasError);
    expect((failure as QaasError).code).toBe("SEAT_CALL_FAILED");
    expect((failure as Error).message).toMatch(/HTTP 401.*invalid api key.*api_key_env/);
  });

  it("reads the key at call time: building needs none, a missing one fails the call naming the variable", async () => {
    delete process.env[KEY_VARIABLE];
    const { server: fake, seat } = await seatFor([{ text: "hello" }]);

    const failure = await seat.run(recordingSeatRequest()).catch((error: unknown) => error);
    expect((failure as QaasError).code).toBe("SEAT_KEY_MISSING");
    expect((failure as Error).message).toContain(KEY_VARIABLE);
    expect(fake.requests).toHaveLength(0);

    process.env[KEY_VARIABLE] = "sk-set-later";
    await expect(seat.run(recordingSeatRequest())).resolves.toMatchObject({ outcome: "completed" });
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer sk-set-later");
  });

  it("records $0 with a notice when a remote seat has no price", async () => {
    server = await startOpenAIFakeServer([{ text: "hi", usage: { input: 1000, output: 1000 } }]);
    // Built directly, past the safety checks, so a seat that is not local can reach the loopback fake.
    const seat = new OpenAICompatibleSeat({
      backend: "openai-compatible",
      model: "priceless-model",
      base_url: `${server.url}/v1`,
      api_key_env: KEY_VARIABLE,
    });
    const result = await seat.run(recordingSeatRequest());
    expect(result.costUsd).toBe(0);
    expect(result.usage).toEqual({ inputTokens: 1000, outputTokens: 1000 });
    expect(result.warnings).toEqual([
      expect.objectContaining({
        type: "notice",
        feature: "price",
        message: expect.stringContaining("priceless-model"),
      }),
    ]);
  });
});
