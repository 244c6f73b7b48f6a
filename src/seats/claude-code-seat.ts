import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { SeatRef } from "../config/agent-schema.ts";
import { QaasError } from "../errors.ts";
import { classifySeatError, readApiKey } from "./model-loop.ts";
import { priceUsage } from "./pricing.ts";
import {
  SEAT_SPECIFICATION_VERSION,
  type SeatRequest,
  type SeatResult,
  type SeatUsage,
  type WorkerSeat,
} from "./seat.ts";

// The Claude Agent SDK seat. The SDK brings a large binary under a proprietary licence, so it is never a
// dependency: it is imported only when this seat runs. Its types are not available at build time, hence
// the small local interface below, typed only as far as this adapter reads it.

export const CLAUDE_AGENT_SDK_PACKAGE = "@anthropic-ai/claude-agent-sdk";
export const CLAUDE_AGENT_SDK_VERSION = "0.3.332";
/** Tools appear to Claude as `mcp__qaas__<tool>`. */
export const CLAUDE_TOOL_SERVER_NAME = "qaas";

export interface ClaudeAgentSdkMessage {
  type: string;
  subtype?: string;
  [field: string]: unknown;
}

export interface ClaudeAgentSdk {
  query(input: { prompt: string; options: Record<string, unknown> }): AsyncIterable<ClaudeAgentSdkMessage>;
}

export type ModuleImporter = (specifier: string) => Promise<unknown>;

export async function loadClaudeAgentSdk(
  importModule: ModuleImporter = (specifier) => import(specifier),
): Promise<ClaudeAgentSdk> {
  let loaded: unknown;
  try {
    loaded = await importModule(CLAUDE_AGENT_SDK_PACKAGE);
  } catch (error) {
    if (!isModuleMissing(error)) {
      throw Object.assign(
        new QaasError(
          "SEAT_SDK_INCOMPATIBLE",
          `${CLAUDE_AGENT_SDK_PACKAGE} is installed but failed to load (${error instanceof Error ? error.message : String(error)}); ` +
            `the tested version is ${CLAUDE_AGENT_SDK_VERSION}`,
        ),
        { cause: error },
      );
    }
    throw Object.assign(
      new QaasError(
        "SEAT_SDK_MISSING",
        `the claude-code seat needs ${CLAUDE_AGENT_SDK_PACKAGE}, which is not installed (it is optional: it ` +
          `brings a large binary under its own licence). Install it with ` +
          `\`npm install ${CLAUDE_AGENT_SDK_PACKAGE}@${CLAUDE_AGENT_SDK_VERSION}\`, or choose another seat`,
      ),
      { cause: error },
    );
  }
  if (typeof (loaded as Partial<ClaudeAgentSdk>).query !== "function") {
    throw new QaasError(
      "SEAT_SDK_INCOMPATIBLE",
      `${CLAUDE_AGENT_SDK_PACKAGE} has no query() function; install the tested version with ` +
        `\`npm install ${CLAUDE_AGENT_SDK_PACKAGE}@${CLAUDE_AGENT_SDK_VERSION}\``,
    );
  }
  return loaded as ClaudeAgentSdk;
}

function isModuleMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    error instanceof Error &&
    error.message.includes(CLAUDE_AGENT_SDK_PACKAGE)
  );
}

/**
 * The seat's tools as an in-process MCP server, passed to the SDK as `{ type: "sdk", instance }` (what its
 * createSdkMcpServer returns). Built here rather than with the SDK's `tool()` helper because that takes Zod
 * shapes, and our tools already carry exact JSON Schemas; the SDK only ever calls `instance.connect()`.
 */
export function createToolServer(request: SeatRequest): McpServer {
  const server = new McpServer(
    { name: CLAUDE_TOOL_SERVER_NAME, version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: request.tools.map((seatTool) => ({
      name: seatTool.name,
      description: seatTool.description,
      inputSchema: { type: "object", ...seatTool.inputSchema } as { type: "object"; [key: string]: unknown },
    })),
  }));
  server.server.setRequestHandler(CallToolRequestSchema, async (call) => {
    const result = await request.callTool(call.params.name, call.params.arguments ?? {});
    return { content: [{ type: "text", text: JSON.stringify(result) }], isError: !result.ok };
  });
  return server;
}

export interface ClaudeRunState {
  refusals: number;
}

/** The SDK options for one run: only our tools, no settings files, and the stop hook wired to `checkStop`. */
export function claudeCodeOptions(
  ref: SeatRef,
  request: SeatRequest,
  toolServer: McpServer,
  state: ClaudeRunState,
  abortController: AbortController,
): Record<string, unknown> {
  const keyVariable = ref.api_key_env;
  const apiKey = readApiKey(keyVariable, "claude-code");
  const extraEnvironment: Record<string, string> = {
    ...(apiKey === undefined ? {} : { ANTHROPIC_API_KEY: apiKey }),
    // Claude Code takes the host without /v1, like Anthropic's own SDK.
    ...(ref.base_url === undefined
      ? {}
      : { ANTHROPIC_BASE_URL: ref.base_url.replace(/\/+$/, "").replace(/\/v1$/, "") }),
  };
  return {
    systemPrompt: request.system,
    ...(ref.model === undefined ? {} : { model: ref.model }),
    maxTurns: request.maxTurns,
    // No built-in tool (no shell, no file edits): everything goes through the guarded qaas tools.
    tools: [],
    mcpServers: {
      [CLAUDE_TOOL_SERVER_NAME]: { type: "sdk", name: CLAUDE_TOOL_SERVER_NAME, instance: toolServer },
    },
    allowedTools: request.tools.map((seatTool) => `mcp__${CLAUDE_TOOL_SERVER_NAME}__${seatTool.name}`),
    permissionMode: "dontAsk",
    strictMcpConfig: true,
    settingSources: [],
    persistSession: false,
    abortController,
    ...(Object.keys(extraEnvironment).length === 0 ? {} : { env: { ...process.env, ...extraEnvironment } }),
    hooks: {
      Stop: [
        {
          hooks: [
            async () => {
              const check = request.checkStop();
              if (check.allow) return {};
              state.refusals += 1;
              if (state.refusals > 1) {
                request.log(
                  `${request.agent}: stop refused again (${check.reason ?? "no reason"}); letting the agent go`,
                );
                return {};
              }
              request.log(
                `${request.agent}: not finished yet, telling Claude once: ${check.reason ?? "no reason"}`,
              );
              return { decision: "block", reason: check.reason ?? "You may not finish yet." };
            },
          ],
        },
      ],
    },
  };
}

export class ClaudeCodeSeat implements WorkerSeat {
  readonly specificationVersion = SEAT_SPECIFICATION_VERSION;
  readonly backend = "claude-code";
  readonly model: string;

  constructor(
    private readonly ref: SeatRef,
    private readonly loadSdk: () => Promise<ClaudeAgentSdk> = () => loadClaudeAgentSdk(),
  ) {
    this.model = ref.model ?? "claude-code-default";
  }

  async run(request: SeatRequest): Promise<SeatResult> {
    const sdk = await this.loadSdk();
    const state: ClaudeRunState = { refusals: 0 };
    const abortController = new AbortController();
    const onAbort = () => abortController.abort(request.signal.reason);
    request.signal.addEventListener("abort", onAbort, { once: true });
    const options = claudeCodeOptions(this.ref, request, createToolServer(request), state, abortController);
    try {
      for await (const message of sdk.query({ prompt: request.task, options })) {
        if (message.type === "result") return this.toResult(message, state);
      }
    } catch (error) {
      throw classifySeatError(error, request.signal, { backend: this.backend, ref: this.ref });
    } finally {
      request.signal.removeEventListener("abort", onAbort);
    }
    throw new QaasError(
      "SEAT_CALL_FAILED",
      `claude-code seat (agent ${request.agent}): the SDK ended without a result`,
    );
  }

  private toResult(message: ClaudeAgentSdkMessage, state: ClaudeRunState): SeatResult {
    const rawUsage = (message.usage ?? {}) as { input_tokens?: number; output_tokens?: number };
    const usage: SeatUsage = {
      inputTokens: rawUsage.input_tokens ?? 0,
      outputTokens: rawUsage.output_tokens ?? 0,
    };
    const turns = typeof message.num_turns === "number" ? message.num_turns : 0;
    if (message.subtype !== "success" && message.subtype !== "error_max_turns") {
      const errors = Array.isArray(message.errors) ? `: ${message.errors.join("; ")}` : "";
      throw new QaasError(
        "SEAT_CALL_FAILED",
        `claude-code seat ended with ${message.subtype ?? "an unknown error"}${errors}`,
      );
    }
    // The SDK knows Anthropic's prices; a price configured on the seat still wins.
    const reported = typeof message.total_cost_usd === "number" ? message.total_cost_usd : undefined;
    const priced =
      this.ref.price === undefined && reported !== undefined
        ? { costUsd: reported, warnings: [] }
        : priceUsage(usage, this.ref);
    const outcome: SeatResult["outcome"] =
      message.subtype === "error_max_turns" ? "max_turns" : state.refusals > 1 ? "stopped" : "completed";
    return {
      outcome,
      turns,
      usage,
      costUsd: priced.costUsd,
      ...(typeof message.result === "string" && message.result !== "" ? { finalText: message.result } : {}),
      warnings: priced.warnings,
    };
  }
}
