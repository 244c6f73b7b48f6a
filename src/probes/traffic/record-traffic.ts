import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { templateOfConcrete } from "../../map/inventory.ts";
import { API_TYPES, apiCallsSettled, watchedPage } from "../browser/api-quiet.ts";
import { splitSessionHeaders } from "../browser/context-sign-in.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import { mayFollow, NEVER_FOLLOW } from "../pages/urls.ts";
import { CHROMIUM_ARGS, findChromium, prepareContext } from "./chromium.ts";

// What pages ask the server for when a real browser loads them: each page is opened as each role in
// Chromium, left to settle, and every same-origin XHR/fetch it makes is recorded (method, URL, content
// type, body). Nothing is clicked or typed. One browser per call, one context and one tab per role, closed
// when the role is done, everything closed on error or abort. Roles are recorded side by side (their
// contexts share nothing), so the recording takes about as long as its longest role.

export interface TrafficRole {
  role: string;
  /** Headers the role's requests carry; a Cookie header becomes the context's cookies. */
  headers(): Promise<Record<string, string>>;
  /** Page paths to open (`/path?query`, or `/#/route` for a hash-routed app). */
  paths: readonly string[];
}

export interface TrafficOptions {
  /** Pages opened at most per role, rendered links included (default 20). */
  maxPagesPerRole?: number;
  /** How long a page may keep the network busy after `load` (default 3 s). */
  settleMs?: number;
  /** Per navigation (default 15 s). */
  pageTimeoutMs?: number;
  /** The whole recording, every role together (default 120 s). */
  maxTotalMs?: number;
  /** Also open same-origin links scripts render (client-side routes), within the page cap (default true). */
  followRenderedLinks?: boolean;
  /** Let writes a page makes on load (POST/PUT/PATCH/DELETE) reach the target; else recorded, then blocked. */
  allowWrites?: boolean;
  /** Why a request may never be sent (an operation the profile excludes), or undefined. */
  refuse?: (method: string, url: string) => string | undefined;
  /** Chromium to drive (default: found on this machine, see findChromium). */
  executablePath?: string;
  signal?: AbortSignal;
}

export interface ObservedRequest {
  role: string;
  /** The page that made it. */
  page: string;
  method: string;
  url: string;
  resourceType: string;
  contentType?: string;
  postData?: string;
  /** False when the request was recorded but blocked (a write the target does not allow, an excluded operation). */
  sent: boolean;
}

export interface RoleTraffic {
  role: string;
  pages: number;
  requests: number;
  stopped?: "max_pages" | "time" | "aborted" | "no_api_calls";
  error?: string;
  /** Pages that failed to load, with why (first few). */
  failures: string[];
}

export interface TrafficResult {
  requests: ObservedRequest[];
  roles: RoleTraffic[];
}

// A server-rendered site makes no API call from its pages: after this many quiet pages (each of another
// template) a role's recording ends, since each further page costs a load and a settle and would add
// nothing. A client-rendered app calls its API from its first page.
const QUIET_PAGES = 5;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
const ROLES_AT_ONCE = 4;
const MAX_POST_DATA = 64 * 1024;

export async function recordTraffic(
  baseUrl: string,
  roles: readonly TrafficRole[],
  options: TrafficOptions = {},
): Promise<TrafficResult> {
  const executablePath = options.executablePath ?? findChromium();
  const origin = new URL(baseUrl).origin;
  const deadline = Date.now() + (options.maxTotalMs ?? 120_000);
  const result: TrafficResult = { requests: [], roles: [] };
  if (options.signal?.aborted) return result;
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: 30_000 });
  const closeOnAbort = (): void => void browser.close().catch(() => {});
  options.signal?.addEventListener("abort", closeOnAbort, { once: true });
  try {
    const recorded = await mapConcurrent(roles, ROLES_AT_ONCE, async (role) => {
      const requests: ObservedRequest[] = [];
      if (options.signal?.aborted) return undefined;
      return { summary: await recordRole(browser, role, origin, deadline, options, requests), requests };
    });
    // In the roles' order, whichever finished first: the map built from them must not depend on timing.
    for (const role of recorded) {
      if (!role) continue;
      result.roles.push(role.summary);
      result.requests.push(...role.requests);
    }
  } finally {
    options.signal?.removeEventListener("abort", closeOnAbort);
    await browser.close().catch(() => {});
  }
  return result;
}

async function recordRole(
  browser: Browser,
  role: TrafficRole,
  origin: string,
  deadline: number,
  options: TrafficOptions,
  requests: ObservedRequest[],
): Promise<RoleTraffic> {
  const summary: RoleTraffic = { role: role.role, pages: 0, requests: 0, failures: [] };
  let headers: Record<string, string>;
  try {
    headers = await role.headers();
  } catch (error) {
    summary.error = error instanceof Error ? error.message : String(error);
    return summary;
  }
  const { cookies, extra } = splitSessionHeaders(headers, origin);
  let context: BrowserContext | undefined;
  try {
    context = await browser.newContext({ serviceWorkers: "block", ignoreHTTPSErrors: true });
    await prepareContext(context);
    if (cookies.length > 0) await context.addCookies(cookies);
    let currentPage = "";
    await context.route("**/*", (route) =>
      handle(route, { role: role.role, page: () => currentPage, origin, extra, options, requests, summary }),
    );
    const maxPages = options.maxPagesPerRole ?? 20;
    // One page per template: `/tasks/33` and `/tasks/51`, or `/help?topic=a` and `?topic=b`, run the same
    // scripts and ask for the same endpoints; a second load costs a settle and adds nothing.
    const templates = new Set<string>();
    const queue = [...new Set(role.paths)];
    const queued = new Set(queue);
    let page: Page | undefined;
    while (queue.length > 0) {
      if (summary.pages >= maxPages) {
        summary.stopped = "max_pages";
        break;
      }
      if (options.signal?.aborted) {
        summary.stopped = "aborted";
        break;
      }
      if (summary.pages >= QUIET_PAGES && summary.requests === 0) {
        summary.stopped = "no_api_calls";
        break;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        summary.stopped = "time";
        break;
      }
      const path = queue.shift() as string;
      const template = pageTemplate(path);
      if (templates.has(template)) continue;
      templates.add(template);
      currentPage = path;
      summary.pages += 1;
      // One tab per role, navigated from page to page: a new tab costs a renderer process of its own,
      // which on a small machine takes longer than the page itself.
      page ??= watchedPage(await context.newPage());
      try {
        const url = new URL(path, origin).href;
        const timeout = Math.min(options.pageTimeoutMs ?? 15_000, left);
        // Another hash route of the document already open would only change the hash: reloaded, the page
        // boots at that route and makes the calls a visitor arriving there would see.
        const sameDocument = url.includes("#") && page.url().split("#")[0] === url.split("#")[0];
        await page.goto(url, { waitUntil: "load", timeout });
        if (sameDocument) await page.reload({ waitUntil: "load", timeout });
        await apiCallsSettled(page, Math.min(options.settleMs ?? 3000, Math.max(1, deadline - Date.now())));
        if (options.followRenderedLinks ?? true) {
          const hrefs = await page.$$eval("a[href]", (anchors) =>
            anchors.map((anchor) => (anchor as HTMLAnchorElement).href),
          );
          for (const href of hrefs) {
            const next = renderedPath(href, origin);
            if (next && !queued.has(next)) {
              queued.add(next);
              queue.push(next);
            }
          }
        }
      } catch (error) {
        if (summary.failures.length < 5)
          summary.failures.push(
            `${path}: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}`,
          );
        // A tab that failed may still be loading or may have crashed: the next page gets a fresh one.
        await page.close().catch(() => {});
        page = undefined;
      }
    }
  } catch (error) {
    summary.error ??= error instanceof Error ? error.message.split("\n")[0] : String(error);
  } finally {
    await context?.close().catch(() => {});
  }
  return summary;
}

/** `/tasks/33` and `/tasks/51?tab=a` share one; each hash route (`/#/basket`) is a page of its own. */
function pageTemplate(path: string): string {
  const [document = "", route] = path.split("#", 2);
  return route === undefined
    ? templateOfConcrete(document, [])
    : `${templateOfConcrete(document, [])}#${templateOfConcrete(route, [])}`;
}

interface RouteState {
  role: string;
  page: () => string;
  origin: string;
  extra: Record<string, string>;
  options: TrafficOptions;
  requests: ObservedRequest[];
  summary: RoleTraffic;
}

/** Every request of the role's pages passes here: recorded when it is the page's own API call, then let through or blocked. */
async function handle(route: Route, state: RouteState): Promise<void> {
  const request = route.request();
  const method = request.method().toUpperCase();
  let url: URL;
  try {
    url = new URL(request.url());
  } catch {
    await route.abort().catch(() => {});
    return;
  }
  const type = request.resourceType();
  const sameOrigin = url.origin === state.origin;
  if (!sameOrigin) {
    // Other sites get no credentials and no calls: scripts, styles and fonts load, API calls and beacons do not.
    if (API_TYPES.has(type) || type === "ping" || type === "websocket") await route.abort().catch(() => {});
    else await route.continue().catch(() => {});
    return;
  }
  const refused = state.options.refuse?.(method, url.href);
  const blockedWrite = !SAFE_METHODS.has(method) && !state.options.allowWrites;
  const leavesSession = type === "document" && NEVER_FOLLOW.test(url.pathname);
  const send = !refused && !blockedWrite && !leavesSession;
  if (API_TYPES.has(type)) {
    const headers = request.headers();
    const observed: ObservedRequest = {
      role: state.role,
      page: state.page(),
      method,
      url: url.href,
      resourceType: type,
      sent: send,
    };
    const contentType = headers["content-type"];
    if (contentType) observed.contentType = contentType;
    const postData = request.postData();
    if (postData) observed.postData = postData.slice(0, MAX_POST_DATA);
    state.requests.push(observed);
    state.summary.requests += 1;
  }
  if (!send) {
    await route.abort("blockedbyclient").catch(() => {});
    return;
  }
  await route.continue({ headers: { ...request.headers(), ...state.extra } }).catch(() => {});
}

/** A role's Cookie header as browser cookies for the target; its other headers go on same-origin requests only. */
/** A link a script rendered, as a page to open: same origin, not a sign-out, the fragment kept for hash routes. */
function renderedPath(href: string, origin: string): string | undefined {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return undefined;
  }
  if (url.origin !== origin) return undefined;
  // `#/route` is a page of a hash-routed app; `#/` is its home, the page itself.
  const hashRoute = /^#!?\/./.test(url.hash) ? url.hash : "";
  const path = `${url.pathname}${url.search}`;
  if (!mayFollow(path) || (hashRoute && NEVER_FOLLOW.test(hashRoute))) return undefined;
  return `${path}${hashRoute}`;
}
