import type { HttpClient } from "../http/http-client.ts";
import type { HttpExchange, HttpRequestSpec } from "../http/http-types.ts";
import type { CookieJar } from "./cookie-jar.ts";
import { parseCookieHeader } from "./cookie-jar.ts";

// The client never follows redirects on its own (a probe must see the 302 it caused); a browser does, and
// sign-in and form submissions only work the way a browser makes them work. So redirects are followed here,
// one budgeted, masked exchange per hop, each hop's Set-Cookie kept before the next hop is sent.

const MAX_HOPS = 6;

export interface RedirectChain {
  /** Where the browser landed: the last exchange. */
  final: HttpExchange;
  /** Every exchange in order, the first request included. */
  chain: HttpExchange[];
  /** A redirect to another origin, which is never followed. */
  leftFor?: string;
}

/** Sends with the jar's cookies (a cookie the spec names itself wins) and keeps what the answer sets. */
export async function sendWithJar(
  client: HttpClient,
  jar: CookieJar,
  spec: HttpRequestSpec,
  extra: { user?: string; signIn?: boolean } = {},
): Promise<HttpExchange> {
  const exchange = await client.send(withJarCookies(jar, spec), extra);
  if (exchange.response) jar.absorb(exchange.response.setCookies, spec.url);
  return exchange;
}

/** How a sign-in sends: through its own jar, marked as a sign-in, each exchange kept where asked. */
export function signInSender(
  environment: { client: HttpClient; sent?: HttpExchange[] },
  jar: CookieJar,
  user: string,
): (spec: HttpRequestSpec) => Promise<HttpExchange> {
  return async (spec) => {
    const exchange = await sendWithJar(environment.client, jar, spec, { signIn: true, user });
    environment.sent?.push(exchange);
    return exchange;
  };
}

/** The spec carrying the jar's cookies for its URL, merged under any cookie the spec already names. */
export function withJarCookies(jar: CookieJar, spec: HttpRequestSpec): HttpRequestSpec {
  const headers = { ...(spec.headers ?? {}) };
  const own = Object.entries(headers).find(([name]) => name.toLowerCase() === "cookie");
  const merged = { ...jar.values(spec.url), ...parseCookieHeader(own?.[1]) };
  if (own) delete headers[own[0]];
  const pairs = Object.entries(merged).map(([name, value]) => `${name}=${value}`);
  if (pairs.length > 0) headers.cookie = pairs.join("; ");
  return { ...spec, headers };
}

/**
 * Sends `first` through `send` and follows same-origin redirects as a browser does: 301/302/303 become a
 * GET without a body, 307/308 repeat the method and body. `send` keeps the cookies (a jar or a session).
 */
export async function followRedirects(
  send: (spec: HttpRequestSpec) => Promise<HttpExchange>,
  first: HttpRequestSpec,
  maxHops = MAX_HOPS,
): Promise<RedirectChain> {
  const chain: HttpExchange[] = [];
  let spec = first;
  for (let hop = 0; ; hop += 1) {
    const exchange = await send(spec);
    chain.push(exchange);
    const next = redirectTarget(exchange);
    if (!next || hop >= maxHops) return { final: exchange, chain };
    if (new URL(next).origin !== new URL(spec.url).origin) return { final: exchange, chain, leftFor: next };
    spec = nextHop(spec, exchange.response!.status, next);
  }
}

/** The absolute URL a 3xx answer points to, if it is a redirect. */
export function redirectTarget(exchange: HttpExchange): string | undefined {
  const response = exchange.response;
  if (!response || response.status < 300 || response.status >= 400 || response.status === 304)
    return undefined;
  const location = response.headers.location;
  if (!location) return undefined;
  try {
    return new URL(location, exchange.request.url).toString();
  } catch {
    return undefined;
  }
}

function nextHop(previous: HttpRequestSpec, status: number, url: string): HttpRequestSpec {
  const keepMethod = status === 307 || status === 308;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(previous.headers ?? {})) {
    const lower = name.toLowerCase();
    if (!keepMethod && (lower === "content-type" || lower === "content-length")) continue;
    headers[name] = value;
  }
  headers.referer = previous.url;
  return keepMethod
    ? { ...previous, url, headers }
    : { method: "GET", url, headers, timeoutMs: previous.timeoutMs };
}
