import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

// JSON Web Tokens as a probe handles them: decoded without trust, re-encoded with a changed header or
// payload, signed with a known HMAC key, and checked against a candidate key offline. Only the HMAC
// family can be signed or cracked here; any other algorithm is left to the unsigned and tampered forgeries.

export interface Jwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  parts: [string, string, string];
}

const HMAC_DIGESTS: Readonly<Record<string, string>> = { HS256: "sha256", HS384: "sha384", HS512: "sha512" };

/** The token's parts when it is a JWS in compact form with JSON header and payload; else undefined. */
export function parseJwt(token: string | undefined): Jwt | undefined {
  const parts = token?.trim().split(".");
  if (parts?.length !== 3) return undefined;
  try {
    const header = JSON.parse(Buffer.from(parts[0]!, "base64url").toString("utf8")) as unknown;
    const payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as unknown;
    if (!isRecord(header) || typeof header.alg !== "string" || !isRecord(payload)) return undefined;
    return { header, payload, parts: parts as [string, string, string] };
  } catch {
    return undefined;
  }
}

export function encodeSegment(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/** The HMAC digest of a JWS algorithm name (`HS256` → `sha256`), or undefined for other families. */
export function hmacDigest(alg: unknown): string | undefined {
  return typeof alg === "string" ? HMAC_DIGESTS[alg.toUpperCase()] : undefined;
}

/** A token with the given header and payload signed with `secret` (the header's HMAC algorithm, HS256 by default). */
export function signHmac(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  secret: string,
): string {
  const alg = hmacDigest(header.alg) ? String(header.alg).toUpperCase() : "HS256";
  const signingInput = `${encodeSegment({ ...header, alg })}.${encodeSegment(payload)}`;
  const signature = createHmac(HMAC_DIGESTS[alg]!, secret).update(signingInput).digest("base64url");
  return `${signingInput}.${signature}`;
}

/** Whether `secret` produced the token's HMAC signature (false for non-HMAC algorithms). */
export function signedWith(jwt: Jwt, secret: string): boolean {
  const digest = hmacDigest(jwt.header.alg);
  if (!digest) return false;
  const expected = createHmac(digest, secret).update(`${jwt.parts[0]}.${jwt.parts[1]}`).digest();
  const actual = Buffer.from(jwt.parts[2], "base64url");
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** The header relabelled `alg` (`none`, `None`…), the payload given, and no signature at all. */
export function unsignedToken(jwt: Jwt, payload: Record<string, unknown>, alg: string): string {
  return `${encodeSegment({ ...jwt.header, alg })}.${encodeSegment(payload)}.`;
}

/** The original header and signature around another payload: what a server that skips verification accepts. */
export function tamperedToken(jwt: Jwt, payload: Record<string, unknown>): string {
  return `${jwt.parts[0]}.${encodeSegment(payload)}.${jwt.parts[2]}`;
}

/** The token's header and payload under a random signature of the same length: every verifier refuses it. */
export function randomlySigned(jwt: Jwt, payload?: Record<string, unknown>): string {
  const length = Math.max(16, Buffer.from(jwt.parts[2], "base64url").length);
  const signature = randomBytes(length).toString("base64url");
  // The original payload segment is kept byte for byte: re-encoding could reorder its keys.
  return `${jwt.parts[0]}.${payload ? encodeSegment(payload) : jwt.parts[1]}.${signature}`;
}

/** Seconds since the epoch, as `exp`, `iat` and `nbf` count. */
export function epochSeconds(now: number = Date.now()): number {
  return Math.floor(now / 1000);
}

/** The payload's `exp` in milliseconds, when it has a numeric one. */
export function expiresAt(jwt: Jwt): number | undefined {
  return typeof jwt.payload.exp === "number" ? jwt.payload.exp * 1000 : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return Boolean(value) && typeof value === "object" && !Array.isArray(value);
}
