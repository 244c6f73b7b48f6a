import type { HttpClient } from "./http-client.ts";

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for code written against the platform's (document loaders) that still reaches the target only
 * through the run's client: its budget, concurrency cap, excluded operations and write policy. A refused
 * or failed request rejects, as fetch does on a network error.
 */
export function fetchThroughClient(
  client: HttpClient,
  options: { maxBodyChars?: number } = {},
): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const exchange = await client.send({
      method: init?.method ?? "GET",
      url,
      headers,
      body: typeof init?.body === "string" ? init.body : undefined,
      maxBodyChars: options.maxBodyChars,
    });
    const response = exchange.response;
    if (!response) throw new TypeError(`${url}: ${exchange.error ?? "no response"}`);
    const answerHeaders = new Headers(response.headers);
    for (const cookie of response.setCookies) answerHeaders.append("set-cookie", cookie);
    return new Response(NULL_BODY_STATUSES.has(response.status) ? null : response.body, {
      status: response.status,
      headers: answerHeaders,
    });
  };
}
