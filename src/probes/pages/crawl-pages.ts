import { Parser } from "htmlparser2";
import type { Page } from "../../map/system-map.ts";

// A breadth-first walk of the target's HTML pages from its UI entry: what a person could reach by
// following links. It reads only: it never submits a form that changes state, never follows a link that
// looks like signing out or deleting, and never leaves the target's origin.

export interface CrawlOptions {
  /** Pages fetched at most (default 50). */
  maxPages?: number;
  /** Sent with every request (a session cookie, an Authorization header). */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

const NEVER_FOLLOW =
  /(?:log|sign)[-_]?(?:out|off)|logoff|\bexit\b|destroy|delete|remove|unsubscribe|deactivate|revoke/i;
const NOT_A_PAGE =
  /\.(?:png|jpe?g|gif|svg|ico|webp|avif|bmp|css|m?js|map|pdf|zip|gz|tgz|tar|rar|7z|mp[34]|webm|ogg|wav|woff2?|ttf|otf|eot|json|xml|txt|csv|wasm)$/i;

interface ParsedPage {
  title?: string;
  links: string[];
  forms: Page["forms"];
  /** GET form actions: navigations a person makes by submitting a search or filter. */
  getActions: string[];
}

export async function crawlPages(
  baseUrl: string,
  entry: string,
  options: CrawlOptions = {},
): Promise<Page[]> {
  const maxPages = options.maxPages ?? 50;
  const fetcher = options.fetch ?? fetch;
  const start = new URL(joinEntry(baseUrl, entry));
  const origin = start.origin;
  const queue = [pathOf(start)];
  const queued = new Set(queue);
  const pages: Page[] = [];

  const enqueue = (path: string): void => {
    if (queued.has(path) || NEVER_FOLLOW.test(path) || NOT_A_PAGE.test(path.split("?")[0] ?? path)) return;
    queued.add(path);
    queue.push(path);
  };

  while (queue.length > 0 && pages.length < maxPages && !options.signal?.aborted) {
    const path = queue.shift() as string;
    const url = new URL(path, origin);
    let response: Response;
    try {
      const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
      response = await fetcher(url, {
        method: "GET",
        redirect: "manual",
        headers: { accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5", ...options.headers },
        signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      });
    } catch {
      pages.push({ path, links: [], forms: [] });
      continue;
    }
    const page: Page = { path, status: response.status, links: [], forms: [] };
    pages.push(page);

    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      const target = sameOriginPath(location, url, origin);
      if (target) {
        page.links.push(target);
        enqueue(target);
      }
      await response.body?.cancel();
      continue;
    }
    const contentType = response.headers.get("content-type") ?? "";
    if (!/html/i.test(contentType)) {
      await response.body?.cancel();
      continue;
    }
    const parsed = parseHtml(await response.text(), url, origin);
    if (parsed.title !== undefined) page.title = parsed.title;
    page.links = parsed.links;
    page.forms = parsed.forms;
    for (const link of [...parsed.links, ...parsed.getActions]) enqueue(link);
  }
  return pages;
}

function parseHtml(html: string, pageUrl: URL, origin: string): ParsedPage {
  const result: ParsedPage = { links: [], forms: [], getActions: [] };
  let base = pageUrl;
  let titleText: string | undefined;
  let inTitle = false;
  let form: Page["forms"][number] | undefined;
  const seenLinks = new Set<string>();

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === "base" && attributes.href) {
          try {
            base = new URL(attributes.href, pageUrl);
          } catch {
            // A broken <base> changes nothing.
          }
        } else if (name === "title" && titleText === undefined) {
          inTitle = true;
          titleText = "";
        } else if ((name === "a" || name === "area") && attributes.href !== undefined) {
          const target = sameOriginPath(attributes.href, base, origin);
          if (target && !seenLinks.has(target)) {
            seenLinks.add(target);
            result.links.push(target);
          }
        } else if (name === "form") {
          const method = (attributes.method ?? "GET").toUpperCase();
          const action = attributes.action
            ? (sameOriginPath(attributes.action, base, origin) ?? absolute(attributes.action, base))
            : pathOf(pageUrl);
          form = { action, method, fields: [] };
          result.forms.push(form);
          if (method === "GET" && action.startsWith("/"))
            result.getActions.push(action.split("?")[0] ?? action);
        } else if (
          form &&
          (name === "input" || name === "select" || name === "textarea" || name === "button")
        ) {
          const fieldName = attributes.name;
          if (fieldName && !form.fields.includes(fieldName)) form.fields.push(fieldName);
        }
      },
      ontext(text) {
        if (inTitle) titleText += text;
      },
      onclosetag(name) {
        if (name === "title") inTitle = false;
        if (name === "form") form = undefined;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  const title = titleText?.replace(/\s+/g, " ").trim();
  if (title) result.title = title;
  return result;
}

/** `/path?query` of a same-origin reference, without its fragment; undefined for anything else. */
function sameOriginPath(reference: string, base: URL, origin: string): string | undefined {
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

function absolute(reference: string, base: URL): string {
  try {
    return new URL(reference, base).href;
  } catch {
    return reference;
  }
}

function pathOf(url: URL): string {
  return `${url.pathname}${url.search}`;
}

/** The entry is a path under the base URL (which may itself carry a path prefix). */
function joinEntry(baseUrl: string, entry: string): string {
  if (/^https?:\/\//i.test(entry)) return entry;
  return `${baseUrl.replace(/\/+$/, "")}/${entry.replace(/^\/+/, "")}`;
}
