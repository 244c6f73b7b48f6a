// Which references a crawl may follow, and the `/path?query` form pages and links are kept in.

/** Links a crawl never follows and never offers as an operation: they end a session or destroy something. */
export const NEVER_FOLLOW =
  /(?:log|sign)[-_]?(?:out|off)|logoff|\bexit\b|destroy|delete|remove|unsubscribe|deactivate|revoke/i;

/** Static files: not pages to crawl. */
export const NOT_A_PAGE =
  /\.(?:png|jpe?g|gif|svg|ico|webp|avif|bmp|css|m?js|map|pdf|zip|gz|tgz|tar|rar|7z|mp[34]|webm|ogg|wav|woff2?|ttf|otf|eot|json|xml|txt|csv|wasm)$/i;

/** `/path?query` of a same-origin reference, without its fragment; undefined for anything else. */
export function sameOriginPath(reference: string, base: URL, origin: string): string | undefined {
  const trimmed = reference.trim();
  if (trimmed === "" || trimmed.startsWith("#") || /^(?:mailto|tel|javascript|data|blob):/i.test(trimmed))
    return undefined;
  try {
    const url = new URL(trimmed, base);
    return url.origin === origin && /^https?:$/.test(url.protocol) ? pathOf(url) : undefined;
  } catch {
    return undefined;
  }
}

export function pathOf(url: URL): string {
  return `${url.pathname}${url.search}`;
}

/** The entry is a path under the base URL (which may itself carry a path prefix), or an absolute URL. */
export function joinEntry(baseUrl: string, entry: string): string {
  if (/^https?:\/\//i.test(entry)) return entry;
  return `${baseUrl.replace(/\/+$/, "")}/${entry.replace(/^\/+/, "")}`;
}

/** Whether a crawl may request this `/path?query`: not a sign-out or destroy link, not a static file. */
export function mayFollow(path: string): boolean {
  return !NEVER_FOLLOW.test(path) && !NOT_A_PAGE.test(path.split("?")[0] ?? path);
}
