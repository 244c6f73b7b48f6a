import type { BrowserContext, Page } from "playwright-core";
import { boundedCall, EVALUATE_MS } from "./bounded-call.ts";
import type { BrowserSession, PageLog } from "./browser-session.ts";

// Opening a page for the checks: a tab of the role's context that (1) counts requests in flight so the
// caller can wait until the page's network is quiet, (2) refuses writes the target does not allow and
// requests the profile excludes (a refused write still counts as "the page did something"), and (3) marks
// side effects that leave the DOM alone (clipboard, storage, history, focus, scroll, print, media, file
// choosers, sockets, workers) so a
// control that only copies a link is not mistaken for a dead one.

export interface LoadedPage {
  page: Page;
  log: PageLog;
  status?: number;
  /** The document's content type, as answered. */
  contentType?: string;
  error?: string;
  /** Writes the page tried to send and was refused (method and URL). */
  blocked: string[];
  /** Resolves once no request has been in flight for `quietMs` (or `maxMs` passed). */
  settle(quietMs?: number, maxMs?: number): Promise<void>;
  /** Requests the page started so far (any origin), for telling whether a click did something. */
  requestsStarted(): number;
  /**
   * How long the document took to load, in ms: how busy the machine and the target are right now. Waits
   * that judge "nothing happened" stretch with it, or a loaded machine would pass slowness off as a defect.
   */
  loadMs: number;
}

/**
 * A wait stretched to how slow the page's load was: `baseMs` on an idle machine, `loadMs × factor` when
 * busier, never more than `maxMs`.
 */
export function stretchedWait(loaded: Pick<LoadedPage, "loadMs">, baseMs: number, maxMs: number, factor = 2) {
  return Math.min(maxMs, Math.max(baseMs, factor * loaded.loadMs));
}

export interface LoadOptions {
  writesAllowed: boolean;
  /** Why a request may never be sent (a profile-excluded operation), or undefined. */
  refuse?: (method: string, url: string) => string | undefined;
  timeoutMs?: number;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

// Runs in the page before its own scripts: wraps effects that change no DOM so a click that only uses them
// is still seen as doing something. Each wrapper calls the original; the page behaves as before.
const ACTIVITY_HOOKS = `(() => {
  if (window.__qaasActivity !== undefined) return;
  window.__qaasActivity = 0;
  const mark = () => { window.__qaasActivity += 1; };
  const wrap = (owner, name) => {
    try {
      const original = owner && owner[name];
      if (typeof original !== "function") return;
      owner[name] = function (...args) { mark(); return original.apply(this, args); };
    } catch {}
  };
  wrap(window, "print"); wrap(window, "scrollTo"); wrap(window, "scrollBy"); wrap(window, "open");
  wrap(document, "execCommand");
  wrap(history, "pushState"); wrap(history, "replaceState"); wrap(history, "back"); wrap(history, "go");
  wrap(Storage.prototype, "setItem"); wrap(Storage.prototype, "removeItem");
  wrap(HTMLElement.prototype, "focus"); wrap(Element.prototype, "scrollIntoView");
  wrap(HTMLMediaElement.prototype, "play");
  wrap(HTMLDialogElement.prototype, "showModal"); wrap(HTMLDialogElement.prototype, "show");
  if (navigator.clipboard) { wrap(navigator.clipboard, "writeText"); wrap(navigator.clipboard, "write"); }
  // A control that opens a file chooser, sends on a socket, asks for the position or shares: no DOM change.
  wrap(HTMLElement.prototype, "click"); wrap(HTMLInputElement.prototype, "showPicker");
  wrap(Element.prototype, "requestFullscreen"); wrap(navigator, "share");
  if (window.WebSocket) wrap(WebSocket.prototype, "send");
  if (navigator.geolocation) { wrap(navigator.geolocation, "getCurrentPosition"); wrap(navigator.geolocation, "watchPosition"); }
  if (window.IDBObjectStore) { wrap(IDBObjectStore.prototype, "put"); wrap(IDBObjectStore.prototype, "add"); }
  if (window.BroadcastChannel) wrap(BroadcastChannel.prototype, "postMessage");
  if (window.Worker) wrap(Worker.prototype, "postMessage");
})();`;

/** What a tab counts and refuses for the page it is loading now (tabs are reused: see borrowPage). */
interface LoadState {
  options: LoadOptions;
  inFlight: number;
  started: number;
  lastChange: number;
  blocked: string[];
}

const loadStates = new WeakMap<Page, LoadState>();

/** The tab's counters and refusals for this load, its listeners, route and hooks added on its first load. */
async function instrument(page: Page, options: LoadOptions): Promise<LoadState> {
  const known = loadStates.has(page);
  const state: LoadState = { options, inFlight: 0, started: 0, lastChange: Date.now(), blocked: [] };
  loadStates.set(page, state);
  if (known) return state;
  const current = () => loadStates.get(page) as LoadState;
  page.on("request", () => {
    const now = current();
    now.inFlight += 1;
    now.started += 1;
    now.lastChange = Date.now();
  });
  const done = (): void => {
    const now = current();
    now.inFlight = Math.max(0, now.inFlight - 1);
    now.lastChange = Date.now();
  };
  page.on("requestfinished", done);
  page.on("requestfailed", done);
  await page.addInitScript(ACTIVITY_HOOKS);
  await page.route("**/*", async (route) => {
    const request = route.request();
    const method = request.method().toUpperCase();
    const { options, blocked } = current();
    const refused = options.refuse?.(method, request.url());
    if (refused || (!options.writesAllowed && !SAFE_METHODS.has(method))) {
      blocked.push(`${method} ${request.url()}`);
      await route.abort("blockedbyclient").catch(() => {});
      return;
    }
    // Fall back, not continue: the role's context route adds its bearer header after this one.
    await route.fallback().catch(() => {});
  });
  return state;
}

/** Once a load ended, its refusals no longer apply to what the tab loads next (for another tool). */
const PASS_THROUGH: LoadOptions = { writesAllowed: true };

export async function loadPage(
  session: BrowserSession,
  context: BrowserContext,
  url: string,
  options: LoadOptions,
): Promise<LoadedPage> {
  const { page, log } = await session.borrowPage(context);
  const state = await instrument(page, options);
  const { blocked } = state;
  const loaded: LoadedPage = {
    page,
    log,
    blocked,
    requestsStarted: () => state.started,
    loadMs: 0,
    settle: async (quietMs = 300, maxMs = stretchedWait(loaded, 3000, 10_000)) => {
      const until = Date.now() + maxMs;
      while (Date.now() < until && !page.isClosed()) {
        if (state.inFlight === 0 && Date.now() - state.lastChange >= quietMs) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
  const loadStarted = Date.now();
  try {
    const response = await page.goto(url, { waitUntil: "load", timeout: options.timeoutMs ?? 15_000 });
    if (response) {
      loaded.status = response.status();
      loaded.contentType = response.headers()["content-type"] ?? "";
    }
  } catch (error) {
    loaded.error = (error instanceof Error ? error.message : String(error)).split("\n")[0];
  }
  loaded.loadMs = Date.now() - loadStarted;
  if (!loaded.error) session.pace.record(loaded.loadMs);
  await loaded.settle();
  return loaded;
}

/** Gives the tab back to the session for another page (see borrowPage), ignoring a browser already gone. */
export async function closePage(session: BrowserSession, loaded: LoadedPage | undefined): Promise<void> {
  if (!loaded) return;
  const state = loadStates.get(loaded.page);
  if (state) state.options = PASS_THROUGH;
  await boundedCall(session.giveBack(loaded.page), 2 * EVALUATE_MS, undefined);
}
