import type { HttpExchange } from "../http/http-types.ts";

// Where an answer can carry a reset token: a JSON field named for one (`token`, `reset_code`, `otp`…), a
// link with one in its query (`/reset?token=…`) in any string or page, a hidden form field named for one.
// Each sighting names its place, so two answers can be compared place by place.

export interface TokenSighting {
  /** `json:<path>`, `json:<path>?<param>`, `link:<param>` or `field:<name>`. */
  place: string;
  value: string;
  description: string;
  /** The JSON path holding it, for a `json_lacks` assertion. */
  jsonPath?: string;
  /** A pattern the answer matches while it carries a token there. */
  pattern: string;
}

const TOKEN_KEY = /token|code|otp|reset|link|url|href|key|nonce|secret|verif|hash|ticket/i;
const NOT_A_RESET_KEY =
  /csrf|xsrf|type|expir|ttl|status|message|error|detail|request_?id|trace|correlation|session|access|refresh|bearer|api_?key/i;
const TOKEN_PARAMETER = /^(reset_?)?(token|code|key|otp|nonce|t|k|hash|signature|sig|ticket)$|reset|token/i;
const LINK_IN_TEXT = /(?:https?:\/\/[^\s"'<>]+|\/[^\s"'<>?]*)\?([^\s"'<>#]+)/gi;
const HIDDEN_FIELD = /<input\b[^>]*>/gi;

export function tokenSightings(exchange: HttpExchange, echoes: readonly string[]): TokenSighting[] {
  const response = exchange.response;
  if (!response) return [];
  const sightings: TokenSighting[] = [];
  if (response.json !== undefined) walk(response.json, "", sightings, echoes);
  else {
    sightings.push(...linkSightings(response.body, "link", echoes));
    sightings.push(...fieldSightings(response.body, echoes));
  }
  return sightings;
}

/** A value shaped like a secret token: six or more digits, a UUID, or twelve or more mixed characters. */
export function tokenShaped(value: string, echoes: readonly string[] = []): boolean {
  const text = value.trim();
  if (text.length < 6 || text.length > 512 || /\s/.test(text)) return false;
  if (echoes.includes(text) || text.includes("@")) return false;
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) return false;
  if (/^\d{6,12}$/.test(text)) return true;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text)) return true;
  return text.length >= 12 && /^[A-Za-z0-9._~+/=-]+$/.test(text) && /\d/.test(text) && /[A-Za-z]/.test(text);
}

function walk(value: unknown, path: string, into: TokenSighting[], echoes: readonly string[]): void {
  if (Array.isArray(value)) {
    for (const [index, item] of value.slice(0, 20).entries())
      walk(item, path ? `${path}.${index}` : String(index), into, echoes);
    return;
  }
  if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      if (/csrf|xsrf/i.test(key)) continue;
      walk(inner, path ? `${path}.${key}` : key, into, echoes);
    }
    return;
  }
  if (typeof value !== "string") return;
  const key = path.split(".").pop() ?? "";
  const links = linkSightings(value, `json:${path}`, echoes);
  if (links.length > 0) {
    into.push(...links.map((sighting) => ({ ...sighting, jsonPath: path })));
    return;
  }
  if (TOKEN_KEY.test(key) && !NOT_A_RESET_KEY.test(key) && tokenShaped(value, echoes)) {
    into.push({
      place: `json:${path}`,
      value,
      description: `the JSON field ${path}`,
      jsonPath: path,
      pattern: `"${escapeRegExp(key)}"\\s*:\\s*"[^"]{6,}"`,
    });
  }
}

function linkSightings(text: string, prefix: string, echoes: readonly string[]): TokenSighting[] {
  const found: TokenSighting[] = [];
  for (const match of text.matchAll(LINK_IN_TEXT)) {
    const query = new URLSearchParams(match[1]!.replace(/&amp;/g, "&"));
    for (const [name, value] of query) {
      if (!TOKEN_PARAMETER.test(name) || !tokenShaped(value, echoes)) continue;
      found.push({
        place: `${prefix}?${name}`,
        value,
        description: `a link's ${name} parameter${prefix.startsWith("json:") ? ` in the JSON field ${prefix.slice(5)}` : ""}`,
        pattern: `[?&]${escapeRegExp(name)}=[A-Za-z0-9_-]{6,}`,
      });
    }
  }
  return found;
}

function fieldSightings(html: string, echoes: readonly string[]): TokenSighting[] {
  const found: TokenSighting[] = [];
  for (const match of html.matchAll(HIDDEN_FIELD)) {
    const tag = match[0];
    const name = attribute(tag, "name");
    const value = attribute(tag, "value");
    if (!name || value === undefined || NOT_A_RESET_KEY.test(name) || !TOKEN_KEY.test(name)) continue;
    if (!tokenShaped(value, echoes)) continue;
    found.push({
      place: `field:${name}`,
      value,
      description: `the form field ${name}`,
      pattern: `name=["']?${escapeRegExp(name)}["']?[^>]*value=["'][^"']{6,}`,
    });
  }
  return found;
}

function attribute(tag: string, name: string): string | undefined {
  const match = tag.match(new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i"));
  return match ? (match[1] ?? match[2] ?? match[3]) : undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
