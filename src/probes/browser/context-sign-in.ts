import type { BrowserContext } from "playwright-core";
import { parseCookieHeader } from "../pages/cookie-jar.ts";
import type { CrawlRole } from "../pages/crawl-pages.ts";

// A browser context carries its role's session as cookies and headers, put on it when it was made. A target
// the run restarted since then may have forgotten that session (kept in memory, or signed with a key made at
// start): before the context's next page, it takes the role's fresh sign-in in place, so every pass holding
// the context browses signed in again rather than as nobody.

/** Who a context browses as: a role name and the headers the run's sign-in layer gives it (a Cookie header
 * becomes the context's cookies). */
export type BrowsingRole = CrawlRole;

type ContextCookie = { name: string; value: string; url: string };

export class ContextSignIn {
  /** Headers other than cookies, added to every request the context sends to the target. */
  extra: Record<string, string> = {};
  private restarts: number;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly role: BrowsingRole,
    private readonly origin: string,
  ) {
    this.restarts = role.restarts?.() ?? 0;
  }

  /** The role's session as it is now: its headers become `extra`, its cookies are answered. */
  async current(): Promise<ContextCookie[]> {
    const { cookies, extra } = splitSessionHeaders(await this.role.headers(), this.origin);
    this.extra = extra;
    return cookies;
  }

  /** Signs `context` in again when the target was restarted since it last was; one renewal at a time. */
  renewIfRestarted(context: BrowserContext): Promise<void> {
    if (this.renewing) return this.renewing;
    const restarts = this.role.restarts?.() ?? 0;
    if (restarts <= this.restarts) return Promise.resolve();
    this.renewing = (async () => {
      const cookies = await this.current();
      if (cookies.length > 0) await context.addCookies(cookies);
      this.restarts = restarts;
    })()
      // A sign-in that fails now leaves the context as it was, to be tried again before the next page.
      .catch(() => {})
      .finally(() => {
        this.renewing = undefined;
      });
    return this.renewing;
  }
}

/** A Cookie header becomes cookies of `origin`; other headers are sent to `origin` as they are. */
export function splitSessionHeaders(
  headers: Record<string, string>,
  origin: string,
): { cookies: ContextCookie[]; extra: Record<string, string> } {
  const extra: Record<string, string> = {};
  let cookies: ContextCookie[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === "cookie")
      cookies = parseCookieHeader(value).map(([cookie, content]) => ({
        name: cookie,
        value: content,
        url: origin,
      }));
    else extra[name.toLowerCase()] = value;
  }
  return { cookies, extra };
}
