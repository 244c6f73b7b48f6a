import {
  type FakeModelServer,
  type ScriptedReply,
  type ScriptResponder,
  startFakeModelServer,
  toolCallsOf,
  type WireFormat,
} from "./fake-model-server.ts";

export type {
  FakeModelServer,
  RecordedRequest,
  ScriptedReply,
  ScriptResponder,
} from "./fake-model-server.ts";

// OpenAI's chat completions wire format, non-streaming: `POST /v1/chat/completions` answered with
// `choices[0].message` (content and/or `tool_calls`), `finish_reason` and `usage`. Point a seat's
// base_url at `${server.url}/v1`.

const openAIFormat: WireFormat = {
  path: "/v1/chat/completions",
  success(reply, request, index) {
    const calls = toolCallsOf(reply);
    const text = "text" in reply ? reply.text : undefined;
    const usage = reply.usage ?? { input: 10, output: 5 };
    return {
      id: `chatcmpl-fake-${index}`,
      object: "chat.completion",
      created: 1_700_000_000 + index,
      model: (request as { model?: string } | undefined)?.model ?? "fake-model",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: text ?? null,
            ...(calls.length === 0
              ? {}
              : {
                  tool_calls: calls.map((call, position) => ({
                    id: `call_${index}_${position}`,
                    type: "function",
                    function: { name: call.tool, arguments: JSON.stringify(call.input) },
                  })),
                }),
          },
          finish_reason: calls.length === 0 ? "stop" : "tool_calls",
        },
      ],
      usage: {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
      },
    };
  },
  error(status, message) {
    return {
      error: {
        message,
        type: status === 429 ? "rate_limit_exceeded" : "invalid_request_error",
        code: status,
      },
    };
  },
};

export function startOpenAIFakeServer(script: ScriptedReply[] | ScriptResponder): Promise<FakeModelServer> {
  return startFakeModelServer(openAIFormat, script);
}
