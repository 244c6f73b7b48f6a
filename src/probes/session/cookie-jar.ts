// The cookies one browser session holds for the target: what the application set on any answer (sign-in,
// redirects, rotation on later requests), sent back as a browser would. One origin per run, so domains are
// not tracked; paths and expiry are, since an application may scope a cookie to /admin or delete one by
// expiring it.

interface StoredCookie {
  name: string;
  value: string;
  path: string;
  /** Epoch ms; undefined for a session cookie. */
  expiresAt: number | undefined;
}

export class CookieJar {
  private readonly cookies = new Map<string, StoredCookie>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Takes the Set-Cookie lines of an answer to `url`: adds, replaces (same name and path) and deletes
   * (expired, Max-Age ≤ 0) cookies. Answers the names whose value changed.
   */
  absorb(setCookies: readonly string[], url: string): string[] {
    const changed: string[] = [];
    for (const line of setCookies) {
      const cookie = parseSetCookie(line, url, this.now());
      if (!cookie) continue;
      const key = `${cookie.name}\u0000${cookie.path}`;
      const previous = this.cookies.get(key);
      if (cookie.expiresAt !== undefined && cookie.expiresAt <= this.now()) {
        if (previous) {
          this.cookies.delete(key);
          changed.push(cookie.name);
        }
        continue;
      }
      this.cookies.set(key, cookie);
      if (previous?.value !== cookie.value) changed.push(cookie.name);
    }
    return changed;
  }

  /** Sets a cookie by hand (a token the recipe places in a cookie), for every path. */
  set(name: string, value: string): void {
    this.cookies.set(`${name}\u0000/`, { name, value, path: "/", expiresAt: undefined });
  }

  /** The value a request to `url` would carry for `name` (the most specific path wins), if any. */
  get(name: string, url?: string): string | undefined {
    return this.matching(url).find((cookie) => cookie.name === name)?.value;
  }

  /** The Cookie header a browser would send to `url`, or undefined when no cookie applies. */
  header(url?: string): string | undefined {
    const seen = new Set<string>();
    const pairs: string[] = [];
    for (const cookie of this.matching(url)) {
      if (seen.has(cookie.name)) continue;
      seen.add(cookie.name);
      pairs.push(`${cookie.name}=${cookie.value}`);
    }
    return pairs.length > 0 ? pairs.join("; ") : undefined;
  }

  /** Name → value of every live cookie (the most specific path wins). */
  values(url?: string): Record<string, string> {
    const values: Record<string, string> = {};
    for (const cookie of this.matching(url)) values[cookie.name] ??= cookie.value;
    return values;
  }

  get size(): number {
    return this.matching(undefined).length;
  }

  clone(): CookieJar {
    const copy = new CookieJar(this.now);
    for (const [key, cookie] of this.cookies) copy.cookies.set(key, { ...cookie });
    return copy;
  }

  /** Live cookies that apply to `url` (all of them without one), longest path first, as browsers order them. */
  private matching(url: string | undefined): StoredCookie[] {
    const path = url === undefined ? undefined : pathOf(url);
    const now = this.now();
    const live: StoredCookie[] = [];
    for (const [key, cookie] of this.cookies) {
      if (cookie.expiresAt !== undefined && cookie.expiresAt <= now) {
        this.cookies.delete(key);
        continue;
      }
      if (path === undefined || pathMatches(cookie.path, path)) live.push(cookie);
    }
    return live.sort((a, b) => b.path.length - a.path.length);
  }
}

/** Name → value of the Set-Cookie lines, ignoring attributes (for evidence and quick looks). */
export function parseSetCookies(setCookies: readonly string[]): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const line of setCookies) {
    const first = line.split(";")[0] ?? "";
    const index = first.indexOf("=");
    if (index > 0) cookies[first.slice(0, index).trim()] = first.slice(index + 1).trim();
  }
  return cookies;
}

/** Name → value of a Cookie request header. */
export function parseCookieHeader(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const index = part.indexOf("=");
    if (index > 0) cookies[part.slice(0, index).trim()] = part.slice(index + 1).trim();
  }
  return cookies;
}

function parseSetCookie(line: string, url: string, now: number): StoredCookie | undefined {
  const [pair = "", ...attributes] = line.split(";");
  const index = pair.indexOf("=");
  if (index <= 0) return undefined;
  const name = pair.slice(0, index).trim();
  const value = pair
    .slice(index + 1)
    .trim()
    .replace(/^"(.*)"$/, "$1");
  let path: string | undefined;
  let expiresAt: number | undefined;
  let maxAgeSeen = false;
  for (const attribute of attributes) {
    const [rawKey = "", ...rest] = attribute.split("=");
    const key = rawKey.trim().toLowerCase();
    const attributeValue = rest.join("=").trim();
    if (key === "path" && attributeValue.startsWith("/")) path = attributeValue;
    else if (key === "max-age" && /^-?\d+$/.test(attributeValue)) {
      maxAgeSeen = true;
      expiresAt = now + Number(attributeValue) * 1000;
    } else if (key === "expires" && !maxAgeSeen) {
      const time = Date.parse(attributeValue);
      if (!Number.isNaN(time)) expiresAt = time;
    }
  }
  return { name, value, path: path ?? defaultPath(url), expiresAt };
}

/** RFC 6265 §5.1.4: the request path up to its last slash. */
function defaultPath(url: string): string {
  const path = pathOf(url);
  const index = path.lastIndexOf("/");
  return index <= 0 ? "/" : path.slice(0, index);
}

function pathMatches(cookiePath: string, requestPath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname || "/";
  } catch {
    return url.startsWith("/") ? (url.split(/[?#]/)[0] ?? "/") : "/";
  }
}
