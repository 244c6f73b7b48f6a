import type { JsonRecordVisit } from "./exposure-walk.ts";
import { isMaskedValue, shannonEntropy, walkRecords } from "./exposure-walk.ts";

// Password hashes in every common storage format, and password-named fields (digests, plaintext). A hash
// format is told by its own prefix and alphabet (modular crypt `$id$`, Werkzeug `method:params$salt$hash`,
// Django `algorithm$iterations$salt$hash`, LDAP `{SCHEME}`), so it is found anywhere in any answer; a bare
// hex or base64 digest is a hash only when the field that holds it is named like a password.

export interface HashFormat {
  name: string;
  /** Unanchored source; `anchored` and `global` compile it for a whole value and for text. */
  source: string;
}

const B64 = "[./A-Za-z0-9+]";

export const PASSWORD_HASH_FORMATS: readonly HashFormat[] = [
  { name: "bcrypt", source: String.raw`\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}` },
  {
    name: "argon2",
    source: String.raw`\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+`,
  },
  { name: "scrypt", source: String.raw`\$scrypt\$[^\s$"'<>]*\$[^\s$"'<>]+\$[^\s$"'<>]+` },
  { name: "scrypt", source: String.raw`scrypt:\d+:\d+:\d+\$[^\s$"'<>]+\$[a-f0-9]{32,}` },
  { name: "scrypt", source: String.raw`\$7\$${B64}{14,}\$${B64}{20,}` },
  // `scrypt$N$salt$hash`, `pbkdf2_sha512$iterations$salt$hash` with base64url salts (Node and Go libraries).
  {
    name: "scrypt",
    source: String.raw`scrypt\$\d+(?:\$\d+\$\d+)?\$[A-Za-z0-9+/_-]{8,}={0,2}\$[A-Za-z0-9+/_-]{20,}={0,2}`,
  },
  { name: "yescrypt", source: String.raw`\$y\$${B64}+\$${B64}+\$${B64}{43}` },
  { name: "pbkdf2", source: String.raw`pbkdf2:sha\d+(?::\d+)?\$[^\s$"'<>]+\$[a-f0-9]{32,}` },
  { name: "pbkdf2", source: String.raw`pbkdf2_sha\d+\$\d+\$[^\s$"'<>]+\$[A-Za-z0-9+/=]{20,}` },
  { name: "pbkdf2", source: String.raw`\$pbkdf2(?:-sha\d+)?\$\d+\$${B64}+={0,2}\$${B64}+={0,2}` },
  {
    name: "sha-crypt",
    source: String.raw`\$[56]\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86}`,
  },
  { name: "md5-crypt", source: String.raw`\$(?:1|apr1)\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}` },
  {
    name: "salted digest",
    source: String.raw`(?:sha1|md5|sha256|sha512)\$[A-Za-z0-9]{0,32}\$[a-f0-9]{32,128}`,
  },
  {
    name: "LDAP hash",
    source: String.raw`\{(?:SSHA|SHA|SSHA256|SSHA512|SMD5|MD5|CRYPT|BCRYPT|PBKDF2(?:-SHA\d+)?)\}[A-Za-z0-9+/=$.]{12,}`,
  },
];

const ANCHORED = PASSWORD_HASH_FORMATS.map(({ name, source }) => ({
  name,
  pattern: new RegExp(`^(?:bcrypt(?:_sha256)?\\$|argon2)?${source}$`),
}));
const IN_TEXT = PASSWORD_HASH_FORMATS.map(({ name, source }) => ({
  name,
  pattern: new RegExp(`(?<![\\w$])${source}(?![\\w$])`, "g"),
}));

/** The format of a value that is, whole, a password hash; undefined otherwise. */
export function hashFormatOf(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed.length < 13 || trimmed.length > 400) return undefined;
  return ANCHORED.find(({ pattern }) => pattern.test(trimmed))?.name;
}

/** Digests of the usual lengths: md5, sha1, sha256, sha512 in hex, and their base64 forms. */
const HEX_DIGEST = /^(?:[a-f0-9]{32}|[a-f0-9]{40}|[a-f0-9]{64}|[a-f0-9]{128})$/i;
const BASE64_DIGEST = /^(?:[A-Za-z0-9+/]{22}==|[A-Za-z0-9+/]{27}=|[A-Za-z0-9+/]{43}=|[A-Za-z0-9+/]{86}==)$/;
const PREFIXED_DIGEST =
  /^(?:md5|sha1|sha256|sha512|sha-256|sha-512)[:$](?:[a-f0-9]{32,128}|[A-Za-z0-9+/]{22,88}={0,2})$/i;

export function isDigest(value: string): boolean {
  return HEX_DIGEST.test(value) || BASE64_DIGEST.test(value) || PREFIXED_DIGEST.test(value);
}

const PASSWORD_WORD = "(?:password|passwd|passwrd|passphrase|passcode|pwd|pw|pass)";
const QUALIFIER_BEFORE =
  "(?:user|account|login|admin|hashed|encrypted|crypted|salted|stored|current|old|new|raw|plain|plaintext|clear|cleartext|db)?";
const QUALIFIER_AFTER =
  "(?:hash|hashed|digest|enc|encrypted|crypt|crypted|salted|sha1|sha256|sha512|md5|bcrypt|value|text|plain|plaintext|clear)?";
/** A field name, lower-cased without separators, that holds a password or its hash. */
const PASSWORD_KEY = new RegExp(`^${QUALIFIER_BEFORE}${PASSWORD_WORD}${QUALIFIER_AFTER}$`);
const SECRET_HASH_KEY = /^(?:secret|pin|passcode)(?:hash|digest)$/;
/** `pass` and `pw` alone say too little to call a plain value a password (a test's `pass: "yes"`). */
const AMBIGUOUS_KEY = /^(?:pass|pw)$/;

function compactKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, "");
}

/** Whether a field name says it holds a password or a password's hash. */
export function isPasswordKey(key: string): boolean {
  const compact = compactKey(key);
  return PASSWORD_KEY.test(compact) || SECRET_HASH_KEY.test(compact);
}

const NOT_A_PASSWORD = /^(?:true|false|yes|no|null|none|undefined|n\/a|set|unset|required|optional|hidden)$/i;

export type PasswordExposureKind = "hash" | "digest" | "plaintext";

export interface PasswordExposure {
  kind: PasswordExposureKind;
  /** `bcrypt password hash`, `sha256-length digest under password_digest`, `plaintext password`. */
  what: string;
  /** A JSON path (`items[0].password_hash`), or `text` for a match in a non-JSON body. */
  path: string;
  value: string;
  /** The object that holds it, when the answer is JSON (to tell the caller's own record from others'). */
  record?: Record<string, unknown>;
  /** Whether the record sits in an array of records. */
  inList?: boolean;
}

function digestName(value: string): string {
  const bare = value.replace(/^[a-z0-9-]+[:$]/i, "");
  const bits = /^[a-f0-9]+$/i.test(bare)
    ? bare.length * 4
    : Math.floor((bare.replace(/=+$/, "").length * 6) / 8) * 8;
  return { 128: "md5", 160: "sha1", 256: "sha256", 512: "sha512" }[bits] ?? "hex";
}

/** What a string field says about passwords, from its name and its value. */
export function passwordExposureOf(key: string, value: string): Omit<PasswordExposure, "path"> | undefined {
  const trimmed = value.trim();
  if (trimmed.length < 4 || isMaskedValue(trimmed)) return undefined;
  const format = hashFormatOf(trimmed);
  if (format) return { kind: "hash", what: `${format} password hash`, value: trimmed };
  if (!isPasswordKey(key)) return undefined;
  if (isDigest(trimmed))
    return { kind: "digest", what: `${digestName(trimmed)} password digest (${key})`, value: trimmed };
  const compact = compactKey(key);
  // A field named for a hash that holds hash material of a format not listed above is still a hash.
  if (/hash|digest|crypt|salted/.test(compact) && looksLikeHashMaterial(trimmed))
    return { kind: "hash", what: `password hash (${key})`, value: trimmed };
  if (AMBIGUOUS_KEY.test(compact) || /hash|digest|crypt|enc|salted/.test(compact)) return undefined;
  if (NOT_A_PASSWORD.test(trimmed) || trimmed.length > 128 || /\s{2,}|\n/.test(trimmed)) return undefined;
  return { kind: "plaintext", what: `plaintext password (${key})`, value: trimmed };
}

/** Long, unspaced, of a hash's alphabet and random-looking: what any hashing library stores. */
function looksLikeHashMaterial(value: string): boolean {
  if (value.length < 20 || value.length > 400 || !/^[A-Za-z0-9+/=$.:_{}-]+$/.test(value)) return false;
  return shannonEntropy(value) >= 3.5;
}

/** Password hashes and password-named values anywhere in a JSON answer, with the record that holds each. */
export function passwordsInJson(json: unknown): PasswordExposure[] {
  const found: PasswordExposure[] = [];
  walkRecords(json, (visit: JsonRecordVisit) => {
    if (typeof visit.value !== "string") return;
    const exposure = passwordExposureOf(visit.key, visit.value);
    if (exposure) found.push({ ...exposure, path: visit.path, record: visit.record, inList: visit.inList });
  });
  return found;
}

/** Hashes of a distinctive format anywhere in a text body (HTML, CSV, an error page). */
export function passwordHashesInText(text: string): PasswordExposure[] {
  const found: PasswordExposure[] = [];
  for (const { name, pattern } of IN_TEXT) {
    for (const match of text.matchAll(pattern)) {
      if (found.some((known) => known.value === match[0])) continue;
      found.push({ kind: "hash", what: `${name} password hash`, path: "text", value: match[0] });
    }
  }
  return found;
}
