import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SeatRef } from "../../src/config/agent-schema.ts";
import type { QaasError } from "../../src/errors.ts";
import { anthropicMessagesBaseUrl } from "../../src/seats/anthropic-seat.ts";
import { createWorkerSeat } from "../../src/seats/create-seat.ts";
import { TransientSeatError } from "../../src/seats/seat.ts";
import { err, ok } from "../../src/tools/result.ts";
import {
  type FakeModelServer,
  type ScriptedReply,
  startAnthropicFakeServer,
} from "./fakes/anthropic-fake-server.ts";
import { recordingSeatRequest, seatTool } from "./fakes/seat-request.ts";

const KEY_VARIABLE = "QAAS_SEAT_TEST_ANTHROPIC_LLM_KEY";

type ContentBlock = { type: string; text?: string; content?: unknown; tool_use_id?: string; name?: string };
interface MessagesBody {
  model: string;
  system?: unknown;
  messages: Array<{ role: string; content: string | ContentBlock[] }>;
  tools?: Array<{ name: string; description: string; input_schema: unknown }>;
}

let server: FakeModelServer | undefined;

async function seatFor(script: ScriptedReply[], overrides: Partial<SeatRef> = {}) {
  server = await startAnthropicFakeServer(script);
  const ref: SeatRef = {
    backend: "anthropic",
    model: "claude-fake",
    base_url: server.url,
    is_local: true,
    api_key_env: KEY_VARIABLE,
    price: { input_per_mtok: 3, output_per_mtok: 15 },
    ...overrides,
  };
  return { server, seat: createWorkerSeat(ref).seat };
}

const bodyOf = (fake: FakeModelServer, index: number): MessagesBody =>
  fake.requests[index]?.body as MessagesBody;

/** The tool results in a request's last user message, parsed back into ToolResults. */
function toolResultsOf(body: MessagesBody): unknown[] {
  const last = body.messages.at(-1);
  const blocks = typeof last?.content === "string" ? [] : (last?.content ?? []);
  return blocks
    .filter((block) => block.type === "tool_result")
    .map((block) => {
      const content = block.content;
      const text =
        typeof content === "string" ? content : (content as ContentBlock[]).map((part) => part.text).join("");
      return JSON.parse(text);
    });
}

beforeEach(() => {
  process.env[KEY_VARIABLE] = "sk-ant-test";
});

afterEach(async () => {
  delete process.env[KEY_VARIABLE];
  await server?.close();
  server = undefined;
});

describe("anthropicMessagesBaseUrl", () => {
  it.each([
    [undefined, "https://api.anthropic.com/v1"],
    ["https://api.anthropic.com", "https://api.anthropic.com/v1"],
    ["https://api.anthropic.com/", "https://api.anthropic.com/v1"],
    ["https://api.anthropic.com/v1", "https://api.anthropic.com/v1"],
    ["https://proxy.example/anthropic/v1/", "https://proxy.example/anthropic/v1"],
  ])("%s → %s", (input, expected) => {
    expect(anthropicMessagesBaseUrl(input)).toBe(expected);
  });
});

describe("AnthropicSeat", () => {
  it.each([
    ["without /v1", ""],
    ["with /v1", "/v1"],
  ])("reaches <base>/v1/messages with a base_url %s", async (_label, suffix) => {
    server = await startAnthropicFakeServer([{ text: "hi" }]);
    const { seat } = {
      seat: createWorkerSeat({
        backend: "anthropic",
        model: "m",
        base_url: `${server.url}${suffix}`,
        is_local: true,
        api_key_env: KEY_VARIABLE,
      }).seat,
    };
    await seat.run(recordingSeatRequest());
    expect(server.requests.map((recorded) => recorded.path)).toEqual(["/v1/messages"]);
    expect(server.requests[0]?.headers["x-api-key"]).toBe("sk-ant-test");
  });

  it("hands the SDK's own warnings to the result instead of the console", async () => {
    // A known model with an output limit above what it supports: the SDK clamps it and says so.
    const { seat } = await seatFor([{ text: "Done." }], {
      model: "claude-3-haiku-20240307",
      max_output_tokens: 100_000,
    });
    const result = await seat.run(recordingSeatRequest());
    expect(result.warnings).toEqual([
      expect.objectContaining({ type: "unsupported", feature: "maxOutputTokens" }),
    ]);
  });

  it("calls a tool, then another, then finishes; tool results (a denial included) reach the next request", async () => {
    const { server: fake, seat } = await seatFor([
      { tool: "http_get", input: { path: "/items" }, usage: { input: 100, output: 20 } },
      { tool: "write_file", input: { path: "db/migrations/1.sql" }, usage: { input: 200, output: 30 } },
      { text: "Done.", usage: { input: 300, output: 50 } },
    ]);
    const request = recordingSeatRequest({
      tools: [
        seatTool("http_get", { path: { type: "string" } }),
        seatTool("write_file", { path: { type: "string" } }),
      ],
      answers: { http_get: ok({ status: 200 }), write_file: err("denied by forbidden-path: migrations") },
    });

    const result = await seat.run(request);

    expect(result).toMatchObject({
      outcome: "completed",
      turns: 3,
      usage: { inputTokens: 600, outputTokens: 100 },
      costUsd: (600 * 3 + 100 * 15) / 1_000_000,
      finalText: "Done.",
    });
    // The output limit is always sent (it bounds a call's cost), so an unknown model id warns of nothing.
    expect(result.warnings).toEqual([]);
    expect(request.toolCalls.map((call) => call.name)).toEqual(["http_get", "write_file"]);
    const first = bodyOf(fake, 0);
    expect(first.model).toBe("claude-fake");
    expect(JSON.stringify(first.system)).toContain("You are a test agent.");
    expect(first.tools?.map((entry) => entry.name)).toEqual(["http_get", "write_file"]);
    expect(toolResultsOf(bodyOf(fake, 1))).toEqual([{ ok: true, data: { status: 200 } }]);
    expect(toolResultsOf(bodyOf(fake, 2))).toEqual([
      { ok: false, error: "denied by forbidden-path: migrations" },
    ]);
  });

  it("tells the model the stop hook's reason once, then lets a stuck agent go", async () => {
    const { server: fake, seat } = await seatFor([{ text: "All done." }, { text: "Really done." }]);
    const request = recordingSeatRequest({ tools: [seatTool("emit_envelope")], mustCall: ["emit_envelope"] });

    const result = await seat.run(request);

    expect(result.outcome).toBe("stopped");
    expect(request.stopChecks).toHaveLength(2);
    expect(fake.requests).toHaveLength(2);
    expect(JSON.stringify(bodyOf(fake, 1).messages.at(-1))).toContain(
      "You must call emit_envelope before finishing.",
    );
    expect(bodyOf(fake, 1).messages.at(-1)?.role).toBe("user");
  });

  it.each([
    { name: "429", reply: { status: 429, message: "rate limited" } as ScriptedReply },
    { name: "529 overloaded", reply: { status: 529, message: "overloaded" } as ScriptedReply },
  ])("maps $name to a TransientSeatError", async ({ reply }) => {
    const { server: fake, seat } = await seatFor([reply, { text: "a retry would have got this" }]);
    await expect(seat.run(recordingSeatRequest())).rejects.toBeInstanceOf(TransientSeatError);
    expect(fake.requests).toHaveLength(1);
  });

  it.each([401, 400])("maps %i to a plain error", async (status) => {
    const { seat } = await seatFor([{ status, message: "nope" }]);
    const failure = await seat.run(recordingSeatRequest()).catch((error: unknown) => error);
    expect(failure).not.toBeInstanceOf(TransientSeatError);
    expect((failure as QaasError).code).toBe("SEAT_CALL_FAILED");
    expect((failure as Error).message).toContain(`HTTP ${status}`);
  });

  it("reads ANTHROPIC_API_KEY by default, at call time", async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_API_KEY;
    try {
      const { seat } = await seatFor([{ text: "hi" }], { api_key_env: undefined });
      const failure = await seat.run(recordingSeatRequest()).catch((error: unknown) => error);
      expect((failure as QaasError).code).toBe("SEAT_KEY_MISSING");
      expect((failure as Error).message).toContain("ANTHROPIC_API_KEY");
    } finally {
      if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});
