import { SECRET_VALUE_PATTERNS } from "../http/masking.ts";

// What counts as sensitive in an answer, by value shape and by field name, with Shannon entropy to tell
// a real key from a word.

export type ExposureKind = "hash" | "credential" | "personal" | "internal" | "environment";

export interface Exposure {
  kind: ExposureKind;
  /** What was found: `password hash`, `api key`, `stack trace`, `email of another user`. */
  what: string;
  /** Where in the body: a JSON path or `text`. */
  path: string;
  value: string;
}

/** Bits per character; random keys score above ~3.5, words and ids well below. */
export function shannonEntropy(text: string): number {
  if (!text) return 0;
  const counts = new Map<string, number>();
  for (const character of text) counts.set(character, (counts.get(character) ?? 0) + 1);
  let entropy = 0;
  for (const count of counts.values()) {
    const probability = count / text.length;
    entropy -= probability * Math.log2(probability);
  }
  return entropy;
}

const HASH_VALUE = SECRET_VALUE_PATTERNS.filter(({ name }) => name.endsWith("hash"));
const KEY_VALUE = SECRET_VALUE_PATTERNS.filter(({ name }) => !name.endsWith("hash"));
const PASSWORD_FIELD =
  /^(password|passwd|pwd|pass|password_?hash|hashed_?password|passwordhash|pw_?hash|encrypted_?password|salt)$/i;
const SECRET_FIELD =
  /(^|_|-)(secret|api_?key|apikey|private_?key|access_?key|client_?secret|secret_?key|signing_?key|refresh_?token|access_?token|auth_?token|session_?token|token)$/i;
const HEX_DIGEST = /^[a-f0-9]{32}$|^[a-f0-9]{40}$|^[a-f0-9]{64}$|^[a-f0-9]{128}$/i;
const MASKED = /^[*•x·.\s-]*$|^\[?(redacted|hidden|masked|filtered)\]?$/i;

export const STACK_TRACE: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  {
    name: "Node.js stack trace",
    pattern: /\n?\s*at (?:[\w$.<>[\] ]+ )?\(?(?:\/|[A-Za-z]:\\|file:\/\/|node:)[^\s)]+:\d+:\d+\)?/,
  },
  { name: "Python traceback", pattern: /Traceback \(most recent call last\)|File "[^"]+", line \d+, in / },
  { name: "Java stack trace", pattern: /\bat [\w$.]+\([\w$]+\.java:\d+\)/ },
  { name: "PHP error", pattern: /(Fatal error|Warning|Parse error): .+ in \/.+ on line \d+/ },
  { name: "Ruby backtrace", pattern: /\.rb:\d+:in `/ },
  { name: ".NET stack trace", pattern: /\bat [\w.]+\(.*\) in .+:line \d+/ },
];

const ENVIRONMENT_KEY =
  /^(PATH|HOME|USER|SHELL|PWD|HOSTNAME|NODE_ENV|PYTHONPATH|DATABASE_URL|DB_(PASS(WORD)?|USER|HOST)|REDIS_URL|AWS_[A-Z_]+|SECRET_KEY|JWT_SECRET|SESSION_SECRET|API_KEY|[A-Z][A-Z0-9_]*_(SECRET|TOKEN|PASSWORD|KEY))$/;

function walk(
  value: unknown,
  path: string,
  visit: (path: string, key: string, value: unknown) => void,
  key = "",
): void {
  visit(path, key, value);
  if (Array.isArray(value))
    for (const [index, item] of value.slice(0, 200).entries()) walk(item, `${path}[${index}]`, visit, key);
  else if (value && typeof value === "object") {
    for (const [inner, child] of Object.entries(value))
      walk(child, path ? `${path}.${inner}` : inner, visit, inner);
  }
}

/** Password hashes anywhere, and password-named fields with a value. */
export function findHashes(json: unknown, text: string): Exposure[] {
  const found: Exposure[] = [];
  if (json !== undefined) {
    walk(json, "", (path, key, value) => {
      if (typeof value !== "string" || value.length < 4 || MASKED.test(value)) return;
      if (PASSWORD_FIELD.test(key))
        found.push({
          kind: "hash",
          what:
            /hash|salt|encrypted/i.test(key) ||
            HASH_VALUE.some(({ pattern }) => new RegExp(pattern.source).test(value))
              ? "password hash"
              : "password",
          path,
          value,
        });
      else if (HASH_VALUE.some(({ pattern }) => new RegExp(pattern.source).test(value)))
        found.push({ kind: "hash", what: "password hash", path, value });
      else if (/hash/i.test(key) && HEX_DIGEST.test(value) && /pass|pwd/i.test(key))
        found.push({ kind: "hash", what: "password digest", path, value });
    });
    return found;
  }
  for (const { name, pattern } of HASH_VALUE) {
    const match = text.match(new RegExp(pattern.source));
    if (match) found.push({ kind: "hash", what: name, path: "text", value: match[0] });
  }
  return found;
}

/** Secret-named fields with key-like values (long, high entropy) and known key shapes anywhere. */
export function findSecrets(json: unknown, text: string): Exposure[] {
  const found: Exposure[] = [];
  if (json !== undefined) {
    walk(json, "", (path, key, value) => {
      if (typeof value !== "string" || MASKED.test(value)) return;
      if (SECRET_FIELD.test(key) && value.length >= 16 && shannonEntropy(value) >= 3.5)
        found.push({ kind: "credential", what: `${key} value`, path, value });
    });
  }
  for (const { name, pattern } of KEY_VALUE) {
    for (const match of text.matchAll(new RegExp(pattern.source, "g"))) {
      if (!found.some((known) => known.value.includes(match[0]) || match[0].includes(known.value)))
        found.push({ kind: "credential", what: name, path: "text", value: match[0] });
    }
  }
  return found;
}

export function findStackTrace(text: string): Exposure | undefined {
  for (const { name, pattern } of STACK_TRACE) {
    const match = text.match(pattern);
    if (match) return { kind: "internal", what: name, path: "text", value: match[0].trim().slice(0, 200) };
  }
  return undefined;
}

/** An object that is a dump of environment variables: several env-shaped keys, at least one sensitive. */
export function findEnvironment(json: unknown): Exposure | undefined {
  let result: Exposure | undefined;
  walk(json, "", (path, _key, value) => {
    if (result || !value || typeof value !== "object" || Array.isArray(value)) return;
    const keys = Object.keys(value);
    const envKeys = keys.filter((key) => /^[A-Z][A-Z0-9_]{1,}$/.test(key));
    const sensitive = envKeys.filter(
      (key) =>
        ENVIRONMENT_KEY.test(key) && /SECRET|TOKEN|PASSWORD|PASS|KEY|DATABASE_URL|REDIS_URL|AWS_/.test(key),
    );
    if (envKeys.length >= 3 && sensitive.length >= 1) {
      const first = sensitive[0]!;
      result = {
        kind: "environment",
        what: `environment variables (${sensitive.slice(0, 5).join(", ")})`,
        path: path ? `${path}.${first}` : first,
        value: String((value as Record<string, unknown>)[first]),
      };
    }
  });
  return result;
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/;

/** Email addresses in `email`-named fields, with where they sit. */
export function emailsIn(json: unknown): Array<{ path: string; value: string }> {
  const found: Array<{ path: string; value: string }> = [];
  walk(json, "", (path, key, value) => {
    if (typeof value === "string" && /e-?mail/i.test(key) && EMAIL.test(value))
      found.push({ path, value: value.toLowerCase() });
  });
  return found;
}
