import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ClaudeAgentSdk,
  type ClaudeAgentSdkMessage,
  ClaudeCodeSeat,
  loadClaudeAgentSdk,
} from "../../src/seats/claude-code-seat.ts";
import { createWorkerSeat } from "../../src/seats/create-seat.ts";
import { err, ok } from "../../src/tools/result.ts";
import { recordingSeatRequest, seatTool } from "./fakes/seat-request.ts";

const KEY_VARIABLE = "QAAS_SEAT_TEST_CLAUDE_LLM_KEY";

afterEach(() => {
  delete process.env[KEY_VARIABLE];
});

type StopHook = () => Promise<Record<string, unknown>>;

/** A stand-in for the SDK's query(): records its options and plays `session` before yielding a result. */
function fakeSdk(session: (options: Record<string, unknown>) => Promise<ClaudeAgentSdkMessage>) {
  const seen: Array<{ prompt: string; options: Record<string, unknown> }> = [];
  const sdk: ClaudeAgentSdk = {
    async *query(input) {
      seen.push(input);
      yield { type: "system", subtype: "init" };
      yield await session(input.options);
    },
  };
  return { sdk, seen };
}

async function connect(options: Record<string, unknown>): Promise<Client> {
  const servers = options.mcpServers as Record<string, { type: string; instance: McpServer }>;
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await servers.qaas?.instance.connect(serverSide);
  const client = new Client({ name: "fake-claude", version: "0" });
  await client.connect(clientSide);
  return client;
}

const stopHookOf = (options: Record<string, unknown>): StopHook => {
  const hooks = options.hooks as { Stop: Array<{ hooks: StopHook[] }> };
  const hook = hooks.Stop[0]?.hooks[0];
  if (hook === undefined) throw new Error("no Stop hook");
  return hook;
};

describe("ClaudeCodeSeat", () => {
  it("says how to install the optional SDK when it is missing", async () => {
    await expect(loadClaudeAgentSdk()).rejects.toMatchObject({
      code: "SEAT_SDK_MISSING",
      message: expect.stringContaining("npm install @anthropic-ai/claude-agent-sdk@0.3.332"),
    });
    const { seat } = createWorkerSeat({ backend: "claude-code" });
    await expect(seat.run(recordingSeatRequest())).rejects.toMatchObject({ code: "SEAT_SDK_MISSING" });
  });

  it("tells a broken install apart from a missing one", async () => {
    const broken = Object.assign(new Error("Unexpected token 'export'"), { code: "ERR_INVALID_SYNTAX" });
    await expect(loadClaudeAgentSdk(async () => Promise.reject(broken))).rejects.toMatchObject({
      code: "SEAT_SDK_INCOMPATIBLE",
      message: expect.stringContaining("Unexpected token"),
    });
    await expect(loadClaudeAgentSdk(async () => ({ notQuery: true }))).rejects.toMatchObject({
      code: "SEAT_SDK_INCOMPATIBLE",
    });
  });

  it("maps the request to SDK options: only qaas tools, over in-process MCP, no settings, the key from api_key_env", async () => {
    process.env[KEY_VARIABLE] = "sk-ant-claude";
    const { sdk, seen } = fakeSdk(async (options) => {
      const client = await connect(options);
      const listed = await client.listTools();
      const answered = await client.callTool({ name: "http_get", arguments: { path: "/" } });
      const denied = await client.callTool({ name: "write_file", arguments: { path: "x" } });
      await client.close();
      return {
        type: "result",
        subtype: "success",
        num_turns: 3,
        result: JSON.stringify({ listed: listed.tools.map((entry) => entry.name), answered, denied }),
        total_cost_usd: 0.042,
        usage: { input_tokens: 1200, output_tokens: 300 },
      };
    });
    const seat = new ClaudeCodeSeat(
      {
        backend: "claude-code",
        model: "claude-test",
        api_key_env: KEY_VARIABLE,
        base_url: "https://gateway.example/v1/",
      },
      async () => sdk,
    );
    const request = recordingSeatRequest({
      tools: [
        seatTool("http_get", { path: { type: "string" } }),
        seatTool("write_file", { path: { type: "string" } }),
      ],
      answers: { http_get: ok({ status: 200 }), write_file: err("denied by write-scope") },
      maxTurns: 7,
    });

    const result = await seat.run(request);

    const options = seen[0]?.options ?? {};
    expect(seen[0]?.prompt).toBe("Test the thing.");
    expect(options).toMatchObject({
      systemPrompt: "You are a test agent.",
      model: "claude-test",
      maxTurns: 7,
      tools: [],
      allowedTools: ["mcp__qaas__http_get", "mcp__qaas__write_file"],
      permissionMode: "dontAsk",
      strictMcpConfig: true,
      settingSources: [],
      persistSession: false,
      mcpServers: { qaas: { type: "sdk", name: "qaas" } },
    });
    const environment = options.env as Record<string, string>;
    expect(environment.ANTHROPIC_API_KEY).toBe("sk-ant-claude");
    expect(environment.ANTHROPIC_BASE_URL).toBe("https://gateway.example");

    const played = JSON.parse(result.finalText ?? "{}");
    expect(played.listed).toEqual(["http_get", "write_file"]);
    expect(JSON.parse(played.answered.content[0].text)).toEqual({ ok: true, data: { status: 200 } });
    expect(played.denied.isError).toBe(true);
    expect(JSON.parse(played.denied.content[0].text)).toEqual({ ok: false, error: "denied by write-scope" });
    expect(request.toolCalls.map((call) => call.name)).toEqual(["http_get", "write_file"]);
    expect(result).toMatchObject({
      outcome: "completed",
      turns: 3,
      usage: { inputTokens: 1200, outputTokens: 300 },
      costUsd: 0.042,
    });
  });

  it("wires checkStop to the Stop hook: blocks once with the reason, then lets a stuck agent go", async () => {
    const answers: Array<Record<string, unknown>> = [];
    const { sdk } = fakeSdk(async (options) => {
      const hook = stopHookOf(options);
      answers.push(await hook(), await hook());
      return {
        type: "result",
        subtype: "success",
        num_turns: 2,
        usage: { input_tokens: 10, output_tokens: 5 },
      };
    });
    const seat = new ClaudeCodeSeat({ backend: "claude-code" }, async () => sdk);
    const request = recordingSeatRequest({ mustCall: ["emit_envelope"] });

    const result = await seat.run(request);

    expect(answers).toEqual([
      { decision: "block", reason: "You must call emit_envelope before finishing." },
      {},
    ]);
    expect(request.stopChecks).toHaveLength(2);
    expect(result.outcome).toBe("stopped");
  });

  it("maps error_max_turns to max_turns and other result errors to a thrown error", async () => {
    const maxTurns = fakeSdk(async () => ({ type: "result", subtype: "error_max_turns", num_turns: 5 }));
    await expect(
      new ClaudeCodeSeat({ backend: "claude-code" }, async () => maxTurns.sdk).run(recordingSeatRequest()),
    ).resolves.toMatchObject({ outcome: "max_turns", turns: 5 });

    const broken = fakeSdk(async () => ({
      type: "result",
      subtype: "error_during_execution",
      errors: ["boom"],
    }));
    await expect(
      new ClaudeCodeSeat({ backend: "claude-code" }, async () => broken.sdk).run(recordingSeatRequest()),
    ).rejects.toThrow(/error_during_execution: boom/);
  });
});
