import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { SeatRef } from "../config/agent-schema.ts";
import { readApiKey, runModelLoop, seatFetch, seatFetchOptions } from "./model-loop.ts";
import { SEAT_SPECIFICATION_VERSION, type SeatRequest, type SeatResult, type WorkerSeat } from "./seat.ts";
import type { HostLookup } from "./seat-safety.ts";

export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/**
 * Any server speaking OpenAI's chat completions with tool calling: OpenAI, Ollama, vLLM, llama.cpp
 * server, OpenRouter. `base_url` is the part before `/chat/completions` (usually ending in `/v1`).
 */
export class OpenAICompatibleSeat implements WorkerSeat {
  readonly specificationVersion = SEAT_SPECIFICATION_VERSION;
  readonly backend = "openai-compatible";
  readonly model: string;

  constructor(
    private readonly ref: SeatRef & { model: string },
    private readonly resolve?: HostLookup,
  ) {
    this.model = ref.model;
  }

  async run(request: SeatRequest): Promise<SeatResult> {
    // Without a base URL the seat talks to OpenAI itself, whose key lives in OPENAI_API_KEY by convention;
    // a custom endpoint (often a local server) may need no key at all.
    const keyVariable =
      this.ref.api_key_env ?? (this.ref.base_url === undefined ? "OPENAI_API_KEY" : undefined);
    const apiKey = readApiKey(keyVariable, this.backend);
    const provider = createOpenAICompatible({
      name: "qaas-openai-compatible",
      baseURL: this.ref.base_url ?? OPENAI_DEFAULT_BASE_URL,
      ...(apiKey === undefined ? {} : { apiKey }),
      includeUsage: true,
      fetch: seatFetch(seatFetchOptions(this.ref, this.resolve)),
    });
    return runModelLoop(provider.chatModel(this.model), request, { backend: this.backend, ref: this.ref });
  }
}
