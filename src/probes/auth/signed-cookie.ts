import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { deflateSync, inflateSync } from "node:zlib";

// Signed session cookies in the itsdangerous format (Flask's session, and any Python app signing with
// `URLSafeTimedSerializer`): `payload.timestamp.signature`, each part base64url without padding; a payload
// starting with `.` is zlib-compressed JSON. The signature is an HMAC over `payload.timestamp` with a key
// derived from the secret and a salt. Read without trust, checked against a candidate secret offline, and
// signed again with a found secret — a forgery the server can only accept when that secret is its own.

export interface SignedCookie {
  /** The payload segment as sent (with its leading `.` when compressed). */
  payload: string;
  timestamp: string;
  signature: string;
  data: Record<string, unknown>;
  compressed: boolean;
}

/** How a signing key is derived from the secret (itsdangerous `key_derivation`). */
export type KeyDerivation = "hmac" | "django-concat" | "concat" | "none";

export interface SigningScheme {
  salt: string;
  derivation: KeyDerivation;
  digest: "sha1" | "sha256";
}

/** Flask's own session scheme first, then the defaults of itsdangerous's serializers. */
export const SIGNING_SCHEMES: readonly SigningScheme[] = [
  { salt: "cookie-session", derivation: "hmac", digest: "sha1" },
  { salt: "itsdangerous", derivation: "django-concat", digest: "sha1" },
  { salt: "itsdangerous.Signer", derivation: "django-concat", digest: "sha1" },
];

const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** The cookie's parts when it has the itsdangerous shape and its payload decodes to a JSON object. */
export function parseSignedCookie(value: string | undefined): SignedCookie | undefined {
  if (!value) return undefined;
  const compressed = value.startsWith(".");
  const parts = (compressed ? value.slice(1) : value).split(".");
  if (parts.length !== 3 || !parts.every((part) => SEGMENT.test(part))) return undefined;
  const [body, timestamp, signature] = parts as [string, string, string];
  // A timestamp is a few bytes of seconds; a SHA-1 or SHA-256 HMAC is 27 or 43 characters.
  if (timestamp.length < 4 || timestamp.length > 8 || (signature.length !== 27 && signature.length !== 43))
    return undefined;
  try {
    const raw = Buffer.from(body, "base64url");
    const text = (compressed ? inflateSync(raw) : raw).toString("utf8");
    const data = JSON.parse(text) as unknown;
    if (!data || typeof data !== "object" || Array.isArray(data)) return undefined;
    return {
      payload: compressed ? `.${body}` : body,
      timestamp,
      signature,
      data: data as Record<string, unknown>,
      compressed,
    };
  } catch {
    return undefined;
  }
}

function derivedKey(secret: string, scheme: SigningScheme): Buffer {
  switch (scheme.derivation) {
    case "hmac":
      return createHmac(scheme.digest, secret).update(scheme.salt).digest();
    case "django-concat":
      return createHash(scheme.digest).update(`${scheme.salt}signer${secret}`).digest();
    case "concat":
      return createHash(scheme.digest).update(`${scheme.salt}${secret}`).digest();
    case "none":
      return Buffer.from(secret);
  }
}

function signatureOf(value: string, secret: string, scheme: SigningScheme): string {
  return createHmac(scheme.digest, derivedKey(secret, scheme)).update(value).digest("base64url");
}

/** Whether `secret` under `scheme` produced the cookie's signature (no request). */
export function signedWith(cookie: SignedCookie, secret: string, scheme: SigningScheme): boolean {
  const expected = Buffer.from(signatureOf(`${cookie.payload}.${cookie.timestamp}`, secret, scheme));
  const actual = Buffer.from(cookie.signature);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** The secret and scheme that signed the cookie, from the candidates; undefined when none did. */
export function crackSignedCookie(
  cookie: SignedCookie,
  secrets: readonly string[],
): { secret: string; scheme: SigningScheme } | undefined {
  const digest = cookie.signature.length === 27 ? "sha1" : "sha256";
  const schemes = SIGNING_SCHEMES.map((scheme) => ({ ...scheme, digest }) as SigningScheme);
  for (const secret of secrets)
    for (const scheme of schemes) if (signedWith(cookie, secret, scheme)) return { secret, scheme };
  return undefined;
}

/** A cookie carrying `data`, stamped `now` and signed with `secret`, as the application would sign it. */
export function signCookie(
  data: Record<string, unknown>,
  secret: string,
  scheme: SigningScheme,
  now: Date = new Date(),
): string {
  const json = Buffer.from(JSON.stringify(data));
  let payload = json.toString("base64url");
  const packed = deflateSync(json);
  if (packed.length < json.length - 1) payload = `.${packed.toString("base64url")}`;
  const timestamp = secondsSegment(Math.floor(now.getTime() / 1000));
  const value = `${payload}.${timestamp}`;
  return `${value}.${signatureOf(value, secret, scheme)}`;
}

/** Seconds as itsdangerous writes them: big-endian bytes without leading zeros, base64url. */
function secondsSegment(seconds: number): string {
  const bytes: number[] = [];
  for (let rest = seconds; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from(bytes).toString("base64url");
}
