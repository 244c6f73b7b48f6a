import type { HttpExchange } from "../http/http-types.ts";

const VOLATILE_KEY =
  /^(id|_id|uuid|guid)$|[_-]?(id|Id|ID)$|(^|_)(created|updated|modified)(_?at|_?on)?$|At$|^(timestamp|time|date|etag|version|request_?id|trace_?id|nonce)$/;

/** JSON with generated identifiers and times left out and echoed input removed from strings. */
function canonical(value: unknown, clean: (text: string) => string): unknown {
  if (typeof value === "string") return clean(value);
  if (Array.isArray(value)) return value.map((item) => canonical(item, clean));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !VOLATILE_KEY.test(key))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, inner]) => [key, canonical(inner, clean)]),
    );
  }
  return value;
}

function htmlEscape(text: string, quote = "&quot;", apostrophe = "&#39;"): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, quote)
    .replace(/'/g, apostrophe);
}

/**
 * How templates write quotes: `&#39;` (Python, Java), `&#039;` (PHP's htmlspecialchars), `&#x27;` (Django,
 * Rails), `&apos;` (HTML5 entities); Go's html/template writes `&#34;` and `&#39;`.
 */
const ESCAPES: ReadonlyArray<[quote: string, apostrophe: string]> = [
  ["&quot;", "&#39;"],
  ["&quot;", "&#039;"],
  ["&quot;", "&#x27;"],
  ["&quot;", "&apos;"],
  ["&#34;", "&#39;"],
];

function variants(text: string): string[] {
  const forms = new Set([
    text,
    encodeURIComponent(text),
    JSON.stringify(text).slice(1, -1),
    ...ESCAPES.flatMap(([quote, apostrophe]) => [
      htmlEscape(text, quote, apostrophe),
      text.replace(/'/g, apostrophe),
    ]),
  ]);
  return [...forms].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
}

/** An element that shows a one-time notice: flash, alert, toast or messages classes, or a status role. */
const TRANSIENT_NOTICE =
  /<(p|div|li|span|section|aside)\b[^>]*\b(class=["'][^"']*\b(flash(es)?|alerts?|toast|notices?|messages?)\b[^"']*["']|role=["'](status|alert)["'])[^>]*>[\s\S]*?<\/\1>/gi;

/**
 * What an answer says, minus what the request itself put in it (the payload echoed back, the unique seed)
 * and minus noise that changes on every request (long hex ids, timestamps). Two requests that the server
 * treats alike get the same signature.
 */
export function signature(
  exchange: HttpExchange | undefined,
  strip: ReadonlyArray<string | undefined>,
): string {
  if (!exchange?.response) return `error:${exchange?.error ?? "none"}`;
  // Servers often trim what they store, so trimmed forms of the echoed input are removed too; the two
  // condition numbers only ever come from the probe's own payloads.
  const forms = [
    ...strip.flatMap((value) => (value ? [...variants(value), ...variants(value.trim())] : [])),
    "7411",
    "7412",
  ];
  const clean = (text: string) => forms.reduce((current, form) => current.split(form).join(""), text);
  if (exchange.response.json !== undefined)
    return `${exchange.response.status}\n${JSON.stringify(canonical(exchange.response.json, clean))}`;
  let text = clean(exchange.response.body);
  text = text
    .replace(/\b[0-9a-f]{16,}\b/gi, "#")
    .replace(/\d{4}-\d{2}-\d{2}[T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?/g, "#")
    .replace(
      /"(request_?id|trace_?id|nonce|csrf[\w-]*|timestamp|time|duration_?ms)"\s*:\s*("[^"]*"|\d+)/gi,
      '"$1":#',
    )
    // A page's fresh anti-forgery token differs on every load.
    .replace(
      /(<input\b[^>]*\bname=["']?[\w-]*(csrf|xsrf|token|nonce)[\w-]*["']?[^>]*\bvalue=)("[^"]*"|'[^']*')/gi,
      "$1#",
    )
    .replace(
      /(<input\b[^>]*\bvalue=)("[^"]*"|'[^']*')([^>]*\bname=["']?[\w-]*(csrf|xsrf|token|nonce))/gi,
      "$1#$3",
    )
    .replace(/(<meta\b[^>]*\bname=["'][\w-]*(csrf|xsrf)[\w-]*["'][^>]*\bcontent=)("[^"]*"|'[^']*')/gi, "$1#")
    // A one-time notice (a flash message, a toast) belongs to whichever page the session loads next, and
    // the run's other probes share the session: it says nothing about this request.
    .replace(TRANSIENT_NOTICE, "");
  return `${exchange.response.status}\n${text}`;
}
