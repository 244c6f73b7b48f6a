import {
  type FakeModelServer,
  type ScriptedReply,
  startFakeModelServer,
  toolCallsOf,
  type WireFormat,
} from "./fake-model-server.ts";

export type { FakeModelServer, RecordedRequest, ScriptedReply } from "./fake-model-server.ts";

// Anthropic's Messages API wire format, non-streaming: `POST /v1/messages` answered with `content` blocks
// (`text`, `tool_use`), `stop_reason` and `usage: {input_tokens, output_tokens}`. A seat's base_url may
// be `server.url` or `${server.url}/v1`; any other path answers 404, which catches a doubled `/v1`.

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

const anthropicFormat: WireFormat = {
  path: "/v1/messages",
  success(reply, request, index) {
    const calls = toolCallsOf(reply);
    const text = "text" in reply ? reply.text : undefined;
    const usage = reply.usage ?? { input: 10, output: 5 };
    return {
      id: `msg_fake_${index}`,
      type: "message",
      role: "assistant",
      model: (request as { model?: string } | undefined)?.model ?? "fake-model",
      content: [
        ...(text === undefined ? [] : [{ type: "text", text }]),
        ...calls.map((call, position) => ({
          type: "tool_use",
          id: `toolu_${index}_${position}`,
          name: call.tool,
          input: call.input,
        })),
      ],
      stop_reason: calls.length === 0 ? "end_turn" : "tool_use",
      stop_sequence: null,
      usage: { input_tokens: usage.input, output_tokens: usage.output },
    };
  },
  error(status, message) {
    return { type: "error", error: { type: ERROR_TYPES[status] ?? "api_error", message } };
  },
};

export function startAnthropicFakeServer(script: ScriptedReply[]): Promise<FakeModelServer> {
  return startFakeModelServer(anthropicFormat, script);
}
