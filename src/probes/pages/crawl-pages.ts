import type { Page } from "../../map/system-map.ts";
import { CookieJar } from "./cookie-jar.ts";
import type { CsrfMeta } from "./csrf.ts";
import { CrawlBudgetSpent, fetchPage, type PageFetcher } from "./page-fetcher.ts";
import { type PageForm, parsePage } from "./parse-page.ts";
import { joinEntry, mayFollow, pathOf, sameOriginPath } from "./urls.ts";

// A breadth-first walk of the target's HTML pages from its UI entry, once per role: what each kind of user
// could reach by following links. It reads only: it never submits a form (not even a GET search), never
// follows a link that looks like signing out or deleting, and never leaves the target's origin.

/** One identity to crawl as: its name and the headers (Authorization, Cookie) its requests carry. */
export interface CrawlRole {
  role: string;
  /** Called before every request, so a session layer can refresh an expiring credential. */
  headers(): Promise<Record<string, string>>;
  /** How often the run has restarted the target so far: a browser context signs in again after each. */
  restarts?(): number;
}

export const ANONYMOUS: CrawlRole = { role: "anonymous", headers: async () => ({}) };

export interface CrawlOptions {
  /** Pages fetched at most per role (default 50). */
  maxPagesPerRole?: number;
  /** The whole crawl, every role together (default 120 s). */
  maxTotalMs?: number;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  fetchPage?: PageFetcher;
  signal?: AbortSignal;
}

/** A page as the crawl saw it: the map's page plus what the frontend reader wants and the map does not keep. */
export interface CrawledPage extends Page {
  forms: PageForm[];
  /** The page's `<meta>` anti-forgery token, when it carries one. */
  csrf?: CsrfMeta;
  inline_scripts?: string[];
}

export type CrawlStop = "max_pages" | "time" | "aborted" | "budget" | "sign_in";

export interface RoleCrawl {
  role: string;
  pages: number;
  stopped?: CrawlStop;
  /** Why the role could not crawl (its sign-in failed), when it could not. */
  error?: string;
}

export interface CrawlResult {
  /** Every page once, merged across roles: `roles` are those it was served to (what the map keeps). */
  pages: CrawledPage[];
  /** Each page as each role saw it (one role each): a link only an admin sees is offered to admins only. */
  visits: CrawledPage[];
  roles: RoleCrawl[];
}

/** How many answers of any kind a role's crawl may read per HTML page it is allowed. */
export const ANSWERS_PER_PAGE = 3;
const ACCEPT_HTML = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5";

export async function crawlAsRoles(
  baseUrl: string,
  entry: string,
  roles: readonly CrawlRole[],
  options: CrawlOptions = {},
): Promise<CrawlResult> {
  const names = roles.map((role) => role.role);
  const duplicate = names.find((name, index) => names.indexOf(name) !== index);
  if (duplicate) throw new Error(`crawlAsRoles: role "${duplicate}" is listed twice; give each role once`);
  const start = new URL(joinEntry(baseUrl, entry));
  const deadline = Date.now() + (options.maxTotalMs ?? 120_000);
  // A spent budget is shared by every role: the first to hit it stops the others.
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  const crawls = await Promise.all(
    roles.map((role) =>
      crawlRole(role, start, deadline, { ...options, signal }, (error) => stop.abort(error)),
    ),
  );
  const visits = crawls.flatMap((crawl) => crawl.pages);
  return {
    pages: mergePages(visits),
    visits,
    roles: crawls.map((crawl) => crawl.summary),
  };
}

/** The crawl of one identity (anonymous unless `headers` are given); kept for callers of the first version. */
export async function crawlPages(
  baseUrl: string,
  entry: string,
  options: CrawlOptions & { maxPages?: number; headers?: Record<string, string> } = {},
): Promise<CrawledPage[]> {
  const role: CrawlRole = options.headers
    ? { role: "anonymous", headers: async () => ({ ...options.headers }) }
    : ANONYMOUS;
  const result = await crawlAsRoles(baseUrl, entry, [role], {
    ...options,
    maxPagesPerRole: options.maxPages ?? options.maxPagesPerRole,
  });
  return result.visits;
}

async function crawlRole(
  role: CrawlRole,
  start: URL,
  deadline: number,
  options: CrawlOptions & { signal: AbortSignal },
  budgetSpent: (error: CrawlBudgetSpent) => void,
): Promise<{ pages: CrawledPage[]; summary: RoleCrawl }> {
  const fetcher = options.fetchPage ?? fetchPage;
  const maxPages = options.maxPagesPerRole ?? 50;
  const origin = start.origin;
  const jar = new CookieJar();
  const queue = [pathOf(start)];
  const queued = new Set(queue);
  const pages: CrawledPage[] = [];
  const summary: RoleCrawl = { role: role.role, pages: 0 };
  const enqueue = (path: string): void => {
    if (queued.has(path) || !mayFollow(path)) return;
    queued.add(path);
    queue.push(path);
  };

  // Links often lead to JSON or files as well as pages: only HTML pages use up the page allowance, with a
  // ceiling on every answer so a link-heavy index cannot run the crawl on.
  let htmlPages = 0;
  while (queue.length > 0) {
    if (htmlPages >= maxPages || pages.length >= maxPages * ANSWERS_PER_PAGE) {
      summary.stopped = "max_pages";
      break;
    }
    if (options.signal.aborted) {
      summary.stopped ??= options.signal.reason instanceof CrawlBudgetSpent ? "budget" : "aborted";
      break;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      summary.stopped = "time";
      break;
    }
    const path = queue.shift() as string;
    const url = new URL(path, origin);
    let roleHeaders: Record<string, string>;
    try {
      roleHeaders = await role.headers();
    } catch (error) {
      summary.stopped = "sign_in";
      summary.error = error instanceof Error ? error.message : String(error);
      break;
    }
    let response: Awaited<ReturnType<PageFetcher>>;
    const get = () =>
      fetcher({
        url: url.href,
        headers: { accept: ACCEPT_HTML, ...jar.decorate(roleHeaders) },
        timeoutMs: Math.min(options.timeoutMs ?? 10_000, Math.max(1, deadline - Date.now())),
        signal: options.signal,
      });
    try {
      // One retry: a page that failed to answer once (a dropped connection, a stalled query) often answers next.
      response = await get().catch((error) => {
        if (error instanceof CrawlBudgetSpent || options.signal.aborted || Date.now() >= deadline)
          throw error;
        return get();
      });
    } catch (error) {
      if (error instanceof CrawlBudgetSpent) {
        summary.stopped = "budget";
        budgetSpent(error);
        break;
      }
      // Cut short by the caller or by another role's spent budget: not a broken page.
      if (options.signal.aborted) continue;
      pages.push({ path, links: [], forms: [], roles: [role.role] });
      continue;
    }
    // Refused by policy (an operation the profile excludes): nothing was sent, nothing to record.
    if (!response) continue;
    jar.absorb(response.setCookies);
    const page: CrawledPage = { path, status: response.status, links: [], forms: [], roles: [role.role] };
    pages.push(page);

    const location = response.headers.location;
    if (response.status >= 300 && response.status < 400 && location) {
      const target = sameOriginPath(location, url, origin);
      if (target) {
        page.links.push(target);
        enqueue(target);
      }
      continue;
    }
    if (!/html/i.test(response.headers["content-type"] ?? "")) {
      if (response.status < 300) page.html = false;
      continue;
    }
    htmlPages += 1;
    page.html = true;
    const parsed = parsePage(response.body, url, origin);
    if (parsed.title !== undefined) page.title = parsed.title;
    page.links = parsed.links;
    page.forms = parsed.forms;
    if (parsed.scripts.length > 0) page.scripts = parsed.scripts;
    if (parsed.inlineScripts.length > 0) page.inline_scripts = parsed.inlineScripts;
    if (parsed.csrf) page.csrf = parsed.csrf;
    for (const link of parsed.links) enqueue(link);
  }
  summary.pages = pages.length;
  return { pages, summary };
}

/**
 * One page per path. Its status and title are the most useful any role got (a page over a redirect to the
 * sign-in page); its roles are those it was served to (2xx), or every role that asked when none was.
 */
export function mergePages(visits: readonly CrawledPage[]): CrawledPage[] {
  const byPath = new Map<string, CrawledPage[]>();
  for (const visit of visits) byPath.set(visit.path, [...(byPath.get(visit.path) ?? []), visit]);
  return [...byPath.values()].map((seen) => {
    const best = [...seen].sort((a, b) => statusRank(a.status) - statusRank(b.status))[0]!;
    const served = seen.filter((visit) => visit.status !== undefined && visit.status < 300);
    const page: CrawledPage = {
      path: best.path,
      links: union(seen.map((visit) => visit.links)),
      forms: uniqueForms(seen.flatMap((visit) => visit.forms)),
      roles: union((served.length > 0 ? served : seen).map((visit) => visit.roles ?? [])),
    };
    if (best.status !== undefined) page.status = best.status;
    if (best.title !== undefined) page.title = best.title;
    if (seen.some((visit) => visit.html !== undefined)) page.html = seen.some((visit) => visit.html);
    const scripts = union(seen.map((visit) => visit.scripts ?? []));
    if (scripts.length > 0) page.scripts = scripts;
    const inline = union(seen.map((visit) => visit.inline_scripts ?? []));
    if (inline.length > 0) page.inline_scripts = inline;
    const csrf = seen.find((visit) => visit.csrf)?.csrf;
    if (csrf) page.csrf = csrf;
    return page;
  });
}

function statusRank(status: number | undefined): number {
  if (status === undefined) return 5;
  return status < 300 ? 0 : status < 400 ? 1 : status < 500 ? 2 : 3;
}

function union(lists: readonly (readonly string[])[]): string[] {
  return [...new Set(lists.flat())];
}

function uniqueForms(forms: PageForm[]): PageForm[] {
  const seen = new Set<string>();
  return forms.filter((form) => {
    const key = `${form.method} ${form.action} ${[...form.fields].sort().join(",")}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
