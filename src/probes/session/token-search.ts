// Where a sign-in answer keeps its token when the profile does not say: a token-like key at any depth
// (`{ data: { session: { jwt } } }`), else any JWT-shaped string. Refresh tokens, CSRF tokens and token
// types are not session tokens and are never taken.

/** Keys that name the session token, most telling first. */
const TOKEN_KEYS = [
  "access_token",
  "accesstoken",
  "auth_token",
  "authtoken",
  "id_token",
  "idtoken",
  "jwt",
  "token",
  "bearer",
  "session_token",
  "sessiontoken",
  "api_key",
  "apikey",
  "session",
  "sid",
];
const NOT_A_SESSION_TOKEN = /refresh|csrf|xsrf|type|expir|ttl|scope|reset|verify|confirm/i;
const JWT = /^[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/;

export interface FoundToken {
  token: string;
  /** Where it was, as a body path (`data.session.jwt`), for the sign-in summary and error messages. */
  path: string;
}

/** `a.b.0.c` (a leading `$.` is allowed) into a parsed JSON value; a non-empty string or a number counts. */
export function stringAt(value: unknown, path: string): string | undefined {
  let current: unknown = value;
  for (const part of path.replace(/^\$\.?/, "").split(".")) {
    if (part === "") continue;
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  if (typeof current === "string" && current.length > 0) return current;
  if (typeof current === "number") return String(current);
  return undefined;
}

/** The session token in a JSON answer, searched breadth-first so the shallowest telling key wins. */
export function findToken(json: unknown): FoundToken | undefined {
  const entries = walk(json);
  const named = entries
    .map((entry) => ({ entry, rank: TOKEN_KEYS.indexOf(normalize(entry.key)) }))
    .filter(
      ({ entry, rank }) => rank >= 0 && typeof entry.value === "string" && entry.value.trim().length >= 8,
    )
    .sort((a, b) => a.entry.depth - b.entry.depth || a.rank - b.rank)[0];
  if (named) return { token: named.entry.value as string, path: named.entry.path };
  const suffixed = entries.find(
    (entry) =>
      /token$/i.test(entry.key) &&
      !NOT_A_SESSION_TOKEN.test(entry.key) &&
      typeof entry.value === "string" &&
      entry.value.length >= 8,
  );
  if (suffixed) return { token: suffixed.value as string, path: suffixed.path };
  const jwt = entries.find(
    (entry) =>
      typeof entry.value === "string" && JWT.test(entry.value) && !NOT_A_SESSION_TOKEN.test(entry.key),
  );
  return jwt ? { token: jwt.value as string, path: jwt.path } : undefined;
}

interface Entry {
  key: string;
  path: string;
  value: unknown;
  depth: number;
}

/** Every key of a JSON value, breadth-first (shallow before deep), skipping refresh/CSRF/type keys' subtrees. */
function walk(root: unknown): Entry[] {
  const entries: Entry[] = [];
  const queue: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: "", depth: 0 }];
  while (queue.length > 0 && entries.length < 2000) {
    const { value, path, depth } = queue.shift()!;
    if (value === null || typeof value !== "object" || depth > 8) continue;
    const pairs: Array<[string, unknown]> = Array.isArray(value)
      ? value.slice(0, 20).map((item, index) => [String(index), item])
      : Object.entries(value);
    for (const [key, inner] of pairs) {
      const innerPath = path ? `${path}.${key}` : key;
      entries.push({ key, path: innerPath, value: inner, depth: depth + 1 });
      if (!NOT_A_SESSION_TOKEN.test(key)) queue.push({ value: inner, path: innerPath, depth: depth + 1 });
    }
  }
  return entries;
}

function normalize(key: string): string {
  return key.toLowerCase().replace(/-/g, "_");
}

/** The first token a JSON answer of `chain` carries, searched as `findToken` does. */
export function tokenInAnswers(chain: ReadonlyArray<{ response?: { json?: unknown } }>): string | undefined {
  for (const exchange of chain) {
    const found = findToken(exchange.response?.json);
    if (found) return found.token;
  }
  return undefined;
}
