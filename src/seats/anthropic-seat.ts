import { createAnthropic } from "@ai-sdk/anthropic";
import type { SeatRef } from "../config/agent-schema.ts";
import { readApiKey, runModelLoop, seatFetch, seatFetchOptions } from "./model-loop.ts";
import { SEAT_SPECIFICATION_VERSION, type SeatRequest, type SeatResult, type WorkerSeat } from "./seat.ts";
import type { HostLookup } from "./seat-safety.ts";

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";

/**
 * The AI SDK's Anthropic provider posts to `<baseURL>/messages`, so its baseURL must END in `/v1`, while
 * Anthropic's own SDK and ANTHROPIC_BASE_URL use the host without it. Users write either; this makes
 * both reach `<host>/v1/messages` (never `/v1/v1/messages`).
 */
export function anthropicMessagesBaseUrl(baseUrl: string | undefined): string {
  const trimmed = (baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`;
}

/** Anthropic's Messages API with tool use. */
export class AnthropicSeat implements WorkerSeat {
  readonly specificationVersion = SEAT_SPECIFICATION_VERSION;
  readonly backend = "anthropic";
  readonly model: string;

  constructor(
    private readonly ref: SeatRef & { model: string },
    private readonly resolve?: HostLookup,
  ) {
    this.model = ref.model;
  }

  async run(request: SeatRequest): Promise<SeatResult> {
    const apiKey = readApiKey(this.ref.api_key_env ?? "ANTHROPIC_API_KEY", this.backend);
    // baseURL and apiKey are always given explicitly: left out, the provider would fall back to the
    // ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY variables behind the seat-safety checks' back.
    const provider = createAnthropic({
      baseURL: anthropicMessagesBaseUrl(this.ref.base_url),
      apiKey,
      fetch: seatFetch(seatFetchOptions(this.ref, this.resolve)),
    });
    return runModelLoop(provider(this.model), request, { backend: this.backend, ref: this.ref });
  }
}
