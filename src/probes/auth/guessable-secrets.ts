import type { Jwt } from "./jwt.ts";
import { signedWith } from "./jwt.ts";

// Keys people sign tokens with when nobody chose one: framework and tutorial defaults, placeholder words,
// the jwt.io example, and the application's own name. Short on purpose: a guess from this list is a
// finding (anyone would try it), a key found only by real cracking is another matter.

/** Tried online too (one request each per operation): the handful people reach for first. */
const MOST_COMMON = [
  "secret",
  "changeme",
  "password",
  "123456",
  "jwt",
  "key",
  "secretkey",
  "secret_key",
  "mysecret",
  "supersecret",
  "dev",
  "test",
  "your-256-bit-secret",
];

/** Tried offline only, against the run's own tokens: free, so the list can be longer. */
const ALSO_COMMON = [
  "change-me",
  "change_me",
  "12345678",
  "jwt-secret",
  "jwt_secret",
  "jwtsecret",
  "secret-key",
  "my-secret",
  "super-secret",
  "topsecret",
  "s3cr3t",
  "development",
  "testing",
  "default",
  "admin",
  "token",
  "random",
  "qwerty",
  "letmein",
  "your-secret-key",
  "your_jwt_secret",
  "shhhhh",
  "keyboard cat",
  "",
];

/**
 * The candidate keys for a target: the common lists, then its name and the words in it (`acme-shop` →
 * `acme-shop`, `acme`, `shop`, `acmeshop-secret`…). `online` is the short part worth a request each.
 */
export function candidateSecrets(appNames: readonly (string | undefined)[] = []): {
  offline: string[];
  online: string[];
} {
  const named: string[] = [];
  for (const name of appNames) {
    const base = name?.trim().toLowerCase();
    if (!base) continue;
    const words = base.split(/[^a-z0-9]+/).filter((word) => word.length >= 3);
    const compact = words.join("");
    named.push(base, compact, ...words, `${compact}secret`, `${compact}-secret`, `${compact}_secret`);
  }
  const unique = (values: readonly string[]) => [...new Set(values)];
  const appOwn = unique(named).slice(0, 16);
  return {
    offline: unique([...MOST_COMMON, ...ALSO_COMMON, ...appOwn]),
    online: unique([...MOST_COMMON, ...appOwn.slice(0, 4)]),
  };
}

/** The candidate that signed `jwt`, found offline (no request); undefined when none did. */
export function crackOffline(jwt: Jwt, candidates: readonly string[]): string | undefined {
  return candidates.find((secret) => signedWith(jwt, secret));
}
