import { createHmac, timingSafeEqual } from "node:crypto";

// Session cookies as Node's middleware signs them, read without trust and checked against candidate secrets
// offline:
// - `cookie-signature` (express-session, cookie-parser's signed cookies): `s:<value>.<signature>`, the
//   signature an HMAC-SHA256 of the value, base64 without padding; URL-encoded in the cookie. express-session
//   signs an opaque session id, cookie-parser any value (`j:` + JSON for objects).
// - Keygrip (cookie-session, Koa's sessions): the data cookie `name=<base64 JSON>` beside `name.sig`, an
//   HMAC-SHA1 of `name=<value>` in URL-safe base64 without padding.
// A cookie that carries data can be forged: the same data written in other bytes (JSON spacing) and signed
// afresh is a value the server never issued, which it only accepts when the secret is its own.

export type ExpressCookieFormat = "cookie-signature" | "keygrip";

export interface ExpressSignedCookie {
  format: ExpressCookieFormat;
  /** The cookie that carries the value (the signature's own cookie is `<name>.sig` for Keygrip). */
  name: string;
  /** The value as signed: the session id, the cookie-parser value, or Keygrip's base64 body. */
  value: string;
  signature: string;
  /** The JSON object the value carries; undefined for an opaque id. */
  data?: Record<string, unknown>;
}

const COOKIE_SIGNATURE = /^s:(.+)\.([A-Za-z0-9+/]{43})$/s;
const KEYGRIP_SIGNATURE = /^[A-Za-z0-9_-]{27}$/;

/** The signed cookies among a user's cookies (name → value as the server set it). */
export function expressSignedCookies(cookies: Record<string, string>): ExpressSignedCookie[] {
  const found: ExpressSignedCookie[] = [];
  for (const [name, raw] of Object.entries(cookies)) {
    const decoded = safeDecode(raw);
    const signed = decoded && COOKIE_SIGNATURE.exec(decoded);
    if (signed) {
      const value = signed[1]!;
      const data = value.startsWith("j:") ? jsonObject(value.slice(2)) : undefined;
      found.push({
        format: "cookie-signature",
        name,
        value,
        signature: signed[2]!,
        ...(data ? { data } : {}),
      });
      continue;
    }
    const signature = cookies[`${name}.sig`];
    if (signature === undefined || !KEYGRIP_SIGNATURE.test(signature)) continue;
    const data = jsonObject(Buffer.from(raw, "base64").toString("utf8"));
    found.push({ format: "keygrip", name, value: raw, signature, ...(data ? { data } : {}) });
  }
  return found;
}

/** The candidate that signed the cookie; undefined when none did (no request is sent). */
export function expressCookieSecret(
  cookie: ExpressSignedCookie,
  secrets: readonly string[],
): string | undefined {
  const actual = Buffer.from(cookie.signature);
  return secrets.find((secret) => {
    const expected = Buffer.from(signatureOf(cookie.format, cookie.name, cookie.value, secret));
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  });
}

/**
 * The cookies to send for `value` signed with `secret`, as the middleware would have set them: one
 * URL-encoded `s:` cookie, or the Keygrip pair.
 */
export function signedCookies(
  format: ExpressCookieFormat,
  name: string,
  value: string,
  secret: string,
): Record<string, string> {
  const signature = signatureOf(format, name, value, secret);
  return format === "cookie-signature"
    ? { [name]: encodeURIComponent(`s:${value}.${signature}`) }
    : { [name]: value, [`${name}.sig`]: signature };
}

/**
 * The cookie's data written in other bytes (JSON with spaces): the same session, in a value the server never
 * signed. Undefined for an opaque value, which cannot be rewritten without changing what it means.
 */
export function rewrittenValue(cookie: ExpressSignedCookie): string | undefined {
  if (!cookie.data) return undefined;
  const json = JSON.stringify(cookie.data, null, 1);
  return cookie.format === "keygrip" ? Buffer.from(json).toString("base64") : `j:${json}`;
}

function signatureOf(format: ExpressCookieFormat, name: string, value: string, secret: string): string {
  if (format === "cookie-signature")
    return createHmac("sha256", secret).update(value).digest("base64").replace(/=+$/, "");
  return createHmac("sha1", secret).update(`${name}=${value}`).digest("base64url");
}

function safeDecode(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
