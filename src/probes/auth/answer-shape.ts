import type { HttpExchange } from "../http/http-types.ts";

// What an answer says, without what changes on every request: the status, where a redirect points (its
// query too, where the message often is), the headers present (names, and the names of cookies set), and
// the body — each with the caller's own input, times, ids, tokens and numbers taken out. Two answers with
// equal shapes tell a visitor nothing apart.

export interface AnswerShape {
  status: number;
  location: string;
  headers: string;
  body: string;
}

/** Headers that differ between any two answers (dates, sizes, request ids, caching validators). */
const VOLATILE_HEADER =
  /^(date|content-length|etag|last-modified|expires|age|set-cookie|x-request-id|x-correlation-id|request-id|traceparent|x-trace-id|x-amzn-trace-id|cf-ray|server-timing|x-runtime|x-response-time|keep-alive|connection|x-ratelimit-remaining|x-ratelimit-reset|ratelimit-remaining|ratelimit-reset|ratelimit)$/i;
const VOLATILE_KEY =
  /(^|_)(at|on|time|timestamp|date|ts|etag|version|request_?id|trace_?id|nonce|csrf.*|token|expires?(_in)?)$|At$|Time$/i;

const VOLATILE_TEXT: ReadonlyArray<RegExp> = [
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
  /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b/g,
  /\b[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b/g,
  /\b[0-9a-f]{16,}\b/gi,
  /\b[A-Za-z0-9+/_-]{24,}={0,2}/g,
  /\d+(\.\d+)?/g,
];

export function shapeOf(exchange: HttpExchange, echoes: readonly string[]): AnswerShape {
  const response = exchange.response;
  if (!response) return { status: 0, location: "", headers: "", body: exchange.error ?? "" };
  const headerNames = Object.keys(response.headers)
    .map((name) => name.toLowerCase())
    .filter((name) => !VOLATILE_HEADER.test(name))
    .sort();
  const cookies = response.setCookies
    .map((line) => line.split("=")[0]!.trim().toLowerCase())
    .filter(Boolean)
    .sort();
  const body =
    response.json !== undefined
      ? JSON.stringify(stable(response.json, echoes))
      : scrub(response.body, echoes);
  return {
    status: response.status,
    // The query stays: a redirect often carries the message there (`/login?error=locked`).
    location: scrub(response.headers.location ?? "", echoes),
    headers: [...headerNames, ...cookies.map((name) => `cookie:${name}`)].join(","),
    body,
  };
}

export function sameShape(a: AnswerShape, b: AnswerShape): boolean {
  return a.status === b.status && a.location === b.location && a.headers === b.headers && a.body === b.body;
}

/** What differs between two shapes, in words, for the evidence. */
export function shapeDifference(a: AnswerShape, b: AnswerShape): string[] {
  const differences: string[] = [];
  if (a.status !== b.status) differences.push(`status ${a.status} vs ${b.status}`);
  if (a.location !== b.location)
    differences.push(`redirect ${a.location || "(none)"} vs ${b.location || "(none)"}`);
  if (a.headers !== b.headers) differences.push("headers");
  if (a.body !== b.body) differences.push("body");
  return differences;
}

function stable(value: unknown, echoes: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => stable(item, echoes));
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([key]) => !VOLATILE_KEY.test(key))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, inner]) => [key, stable(inner, echoes)]);
    return Object.fromEntries(entries);
  }
  if (typeof value === "string") return scrub(value, echoes);
  if (typeof value === "number") return "#";
  return value;
}

/** The text without the caller's own input (in every usual encoding) and without volatile tokens. */
export function scrub(text: string, echoes: readonly string[]): string {
  let result = text;
  const forms = echoes
    .filter((echo) => echo.length >= 3)
    .flatMap((echo) => [
      echo,
      encodeURIComponent(echo),
      escapeHtml(echo),
      JSON.stringify(echo).slice(1, -1),
      echo.replace(/'/g, "&#x27;"),
      echo.replace(/@/g, "&#64;"),
    ]);
  for (const form of [...new Set(forms)].sort((a, b) => b.length - a.length))
    result = result.split(form).join("");
  for (const pattern of VOLATILE_TEXT) result = result.replace(pattern, "#");
  // CSRF tokens and nonces in pages change on every load.
  result = result.replace(/(value|content|nonce)="[^"]{16,}"/gi, '$1="#"');
  return result;
}

function escapeHtml(value: string): string {
  return value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}
