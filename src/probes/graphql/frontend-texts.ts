import type { Page } from "../../map/system-map.ts";
import { joinUrl } from "../http/target-url.ts";
import type { GraphqlSend } from "./graphql-transport.ts";

// What the application serves to a browser, read once per URL: its scripts (for endpoint paths) and, when
// introspection is refused, its pages too (inline scripts hold the operations a page sends).

export class FrontendTexts {
  readonly #texts = new Map<string, Promise<string>>();

  constructor(
    private readonly send: GraphqlSend,
    private readonly baseUrl: string,
  ) {}

  /** The body of a same-origin path or URL answered 200; "" for another origin or anything else. */
  read(pathOrUrl: string): Promise<string> {
    const url = sameOriginUrl(pathOrUrl, this.baseUrl);
    if (!url) return Promise.resolve("");
    let text = this.#texts.get(url);
    if (!text) {
      text = this.send({ method: "GET", url, headers: { accept: "*/*" } }).then((exchange) =>
        exchange?.response?.status === 200 ? exchange.response.body : "",
      );
      this.#texts.set(url, text);
    }
    return text;
  }
}

/** Same-origin scripts the crawled pages load, most shared first (a bundle every page loads). */
export function pageScripts(pages: readonly Page[], limit: number): string[] {
  const counts = new Map<string, number>();
  for (const page of pages)
    for (const script of page.scripts ?? []) counts.set(script, (counts.get(script) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([script]) => script);
}

/** Crawled HTML pages, one per path without its query, in crawl order. */
export function htmlPages(pages: readonly Page[], limit: number): string[] {
  const paths = new Set<string>();
  for (const page of pages) {
    if (page.html !== true || (page.status !== undefined && page.status !== 200)) continue;
    paths.add(page.path.split(/[?#]/)[0] ?? page.path);
    if (paths.size >= limit) break;
  }
  return [...paths];
}

function sameOriginUrl(pathOrUrl: string, baseUrl: string): string | undefined {
  if (!/^https?:\/\//i.test(pathOrUrl)) return joinUrl(baseUrl, pathOrUrl);
  return new URL(pathOrUrl).origin === new URL(baseUrl).origin ? pathOrUrl : undefined;
}
