import { randomBytes } from "node:crypto";
import {
  type ExpressSignedCookie,
  expressCookieSecret,
  expressSignedCookies,
  rewrittenValue,
  signedCookies,
} from "./express-cookies.ts";
import {
  crackSignedCookie,
  parseSignedCookie,
  SIGNING_SCHEMES,
  type SignedCookie,
  type SigningScheme,
  signCookie,
} from "./signed-cookie.ts";

// One seam for every way a framework signs its session cookie: find the signed cookie among a user's
// cookies, find the secret offline, and write the cookies a forger would send. Formats: itsdangerous
// (Flask and Python serializers), cookie-signature (express-session, cookie-parser) and Keygrip
// (cookie-session, Koa).

export interface SignedSessionCookie {
  /** The cookies that make the session, as the server set them (every one a credential). */
  cookies: Record<string, string>;
  /** The format, in words for a ticket. */
  format: string;
  /** Whether the cookie carries the session's data (forgeable) rather than an opaque id. */
  carriesData: boolean;
  /** The candidate that signed it, with the scheme in words; undefined when none did. */
  crack(secrets: readonly string[]): { secret: string; scheme: string } | undefined;
  /**
   * The session's own data in a value the server never issued, signed with `secret`: the cookies to send.
   * For an opaque id, the same id signed with `secret` (the server's cookie itself when `secret` is its own).
   */
  forge(secret: string): Record<string, string>;
}

/** The signed session cookies among one user's cookies, data-carrying ones first. */
export function signedSessionCookies(cookies: Record<string, string>): SignedSessionCookie[] {
  const found: SignedSessionCookie[] = [];
  for (const [name, value] of Object.entries(cookies)) {
    const cookie = parseSignedCookie(value);
    if (cookie) found.push(itsdangerousSession(name, value, cookie));
  }
  for (const cookie of expressSignedCookies(cookies)) found.push(expressSession(cookies, cookie));
  return found.sort((a, b) => Number(b.carriesData) - Number(a.carriesData));
}

function itsdangerousSession(name: string, value: string, cookie: SignedCookie): SignedSessionCookie {
  // The scheme the crack found signs the forgeries too (a random-secret control included).
  let signing: SigningScheme = SIGNING_SCHEMES[0]!;
  return {
    cookies: { [name]: value },
    format: "itsdangerous",
    carriesData: true,
    crack(secrets) {
      const cracked = crackSignedCookie(cookie, secrets);
      if (!cracked) return undefined;
      signing = cracked.scheme;
      return { secret: cracked.secret, scheme: `${signing.digest} HMAC, salt "${signing.salt}"` };
    },
    // A fresh timestamp: the same data in a value the server never issued.
    forge: (secret) => ({ [name]: signCookie(cookie.data, secret, signing) }),
  };
}

function expressSession(all: Record<string, string>, cookie: ExpressSignedCookie): SignedSessionCookie {
  const own =
    cookie.format === "keygrip"
      ? { [cookie.name]: all[cookie.name]!, [`${cookie.name}.sig`]: all[`${cookie.name}.sig`]! }
      : { [cookie.name]: all[cookie.name]! };
  const rewritten = rewrittenValue(cookie);
  return {
    cookies: own,
    format:
      cookie.format === "keygrip"
        ? "Keygrip, as cookie-session signs it"
        : cookie.data
          ? "cookie-signature, as cookie-parser signs it"
          : "cookie-signature, as express-session signs its session id",
    carriesData: rewritten !== undefined,
    crack(secrets) {
      const secret = expressCookieSecret(cookie, secrets);
      return secret === undefined
        ? undefined
        : { secret, scheme: cookie.format === "keygrip" ? "sha1 HMAC" : "sha256 HMAC" };
    },
    forge: (secret) => signedCookies(cookie.format, cookie.name, rewritten ?? cookie.value, secret),
  };
}

/** A secret nobody has: what a forger without the key would sign with (the control). */
export function randomSecret(): string {
  return randomBytes(16).toString("hex");
}
