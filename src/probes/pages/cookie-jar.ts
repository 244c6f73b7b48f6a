// One role's cookies during a crawl. A session that rotates its cookie on every page (or sets one on the
// first anonymous visit) keeps working; the crawl is one origin, so domain and path scoping are left out.

export class CookieJar {
  private readonly cookies = new Map<string, string>();
  /** The role's own cookies as last seen: when one changes (a fresh sign-in), it beats what a page set. */
  private readonly given = new Map<string, string>();

  /** Takes `Set-Cookie` values from a response; an expired or emptied cookie is dropped. */
  absorb(setCookies: readonly string[], now: number = Date.now()): void {
    for (const line of setCookies) {
      const [pair = "", ...attributes] = line.split(";");
      const separator = pair.indexOf("=");
      if (separator <= 0) continue;
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      if (value === "" || expired(attributes, now)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /**
   * The headers to send: the role's own (Authorization, its session cookie) with the cookies pages have set
   * since merged into its `Cookie` header.
   */
  decorate(roleHeaders: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = {};
    let roleCookie = "";
    for (const [name, value] of Object.entries(roleHeaders)) {
      if (name.toLowerCase() === "cookie") roleCookie = value;
      else headers[name] = value;
    }
    const merged = new Map<string, string>();
    for (const [name, value] of parseCookieHeader(roleCookie)) {
      if (this.given.get(name) !== value) {
        this.given.set(name, value);
        this.cookies.delete(name);
      }
      merged.set(name, value);
    }
    for (const [name, value] of this.cookies) merged.set(name, value);
    if (merged.size > 0) headers.cookie = [...merged].map(([name, value]) => `${name}=${value}`).join("; ");
    return headers;
  }

  names(): string[] {
    return [...this.cookies.keys()];
  }
}

export function parseCookieHeader(header: string): Array<[string, string]> {
  return header
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part.includes("="))
    .map((part) => {
      const separator = part.indexOf("=");
      return [part.slice(0, separator).trim(), part.slice(separator + 1).trim()] as [string, string];
    });
}

function expired(attributes: readonly string[], now: number): boolean {
  for (const attribute of attributes) {
    const [key = "", value = ""] = attribute.split("=").map((part) => part.trim());
    if (key.toLowerCase() === "max-age" && Number(value) <= 0) return true;
    if (key.toLowerCase() === "expires") {
      const at = Date.parse(attribute.slice(attribute.indexOf("=") + 1).trim());
      if (!Number.isNaN(at) && at <= now) return true;
    }
  }
  return false;
}
