import type { RunContext } from "../../tools/context.ts";
import type { HttpExchange } from "./http-types.ts";
import type { Masker } from "./masking.ts";

const EXCERPT_CHARS = 4000;

/** The masked, serialisable form of an exchange: what artifacts and tool answers carry. */
export function maskedExchange(exchange: HttpExchange, masker: Masker, excerptChars = EXCERPT_CHARS) {
  const response = exchange.response;
  return {
    sequence: exchange.sequence,
    started_at: exchange.startedAt,
    user: exchange.user ?? "anonymous",
    duration_ms: exchange.durationMs,
    request: {
      method: exchange.request.method,
      url: masker.maskUrl(exchange.request.url),
      headers: masker.maskHeaders(exchange.request.headers),
      body: exchange.request.body === undefined ? undefined : masker.maskBody(exchange.request.body),
    },
    response: response
      ? {
          status: response.status,
          headers: masker.maskHeaders(response.headers),
          set_cookie: response.setCookies.map(
            (cookie) => masker.maskHeaders({ "set-cookie": cookie })["set-cookie"],
          ),
          body: truncate(masker.maskBody(response.body), excerptChars),
          body_truncated: response.truncated || response.body.length > excerptChars,
        }
      : undefined,
    error: exchange.error,
  };
}

function truncate(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/** Writes one exchange as a masked JSON artifact and answers its URI. */
export function recordExchange(
  context: RunContext,
  name: string,
  exchange: HttpExchange,
  masker: Masker,
): string {
  const safeName = name.replace(/[^A-Za-z0-9._/-]+/g, "-").replace(/-+/g, "-");
  return context.putArtifact(
    `${safeName}.json`,
    `${JSON.stringify(maskedExchange(exchange, masker, 64 * 1024), null, 2)}\n`,
  );
}
