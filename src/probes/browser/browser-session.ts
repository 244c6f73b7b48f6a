import type { Browser, BrowserContext, CDPSession, Page, Request, Response } from "playwright-core";
import type { ToolContext } from "../../tools/context.ts";
import { onAgentEnd, onRunEnd } from "../../tools/run-end.ts";
import { forbiddenRequests } from "../http/profile-endpoints.ts";
import { quietWindowsOf } from "../http/quiet-window.ts";
import { CHROMIUM_ARGS, findChromium, prepareContext } from "../traffic/chromium.ts";
import { watchedPage } from "./api-quiet.ts";
import { boundedCall } from "./bounded-call.ts";
import { BrowsePace } from "./browse-pace.ts";
import { gateTargetRequests } from "./browser-gate.ts";
import { type BrowsingRole, ContextSignIn } from "./context-sign-in.ts";

export type { BrowsingRole } from "./context-sign-in.ts";

// One Chromium per run, launched when first needed and closed when the run ends; one browser context per
// role and viewport (contexts share nothing: cookies, storage and cache stay apart), so a page opened as
// `member` at mobile width never sees another role's session. Agents hold the browser while they run
// (`hold`/`release`): one agent ending never closes it under another, and once no agent holds it the
// browser is closed to give its memory back to the rest of the run (the next agent launches it again).
// Every page opened through the session keeps a log of what a person debugging it would look at first:
// console messages, uncaught exceptions, the network exchanges the page made, dialogs it raised and
// downloads it started.

export interface Viewport {
  name: string;
  width: number;
  height: number;
  isMobile?: boolean;
  hasTouch?: boolean;
}

export const DESKTOP: Viewport = { name: "desktop", width: 1280, height: 800 };
export const MOBILE: Viewport = { name: "mobile", width: 390, height: 844, isMobile: true, hasTouch: true };

export interface ConsoleEntry {
  type: string;
  text: string;
  /** `url:line:column` of the message's source, when the browser tells it. */
  location?: string;
}

export interface PageErrorEntry {
  message: string;
  stack?: string;
}

export interface NetworkEntry {
  method: string;
  url: string;
  resourceType: string;
  status?: number;
  /** Why the request got no answer (refused, aborted, DNS), when it got none. */
  failure?: string;
}

export interface PageLog {
  console: ConsoleEntry[];
  pageErrors: PageErrorEntry[];
  network: NetworkEntry[];
  dialogs: string[];
  downloads: string[];
}

export interface OpenedPage {
  page: Page;
  log: PageLog;
  /** The main document's answer (undefined when navigation failed before one came). */
  response: Response | null;
  /** The navigation's error, when it failed. */
  error?: string;
}

const MAX_LOG_ENTRIES = 500;
/** Tabs kept for reuse, across contexts: enough for the passes that run at once, few enough to cost little. */
const MAX_IDLE_TABS = 4;
/** How long a tab given back may take to reach a blank page before it is closed instead. */
const BLANK_MS = 5_000;

/**
 * Pages the browsers of this process visited (main-frame navigations), the tabs they opened for them and
 * the time at least one page was open, so the bench can report pages per minute of browsing.
 */
export const browsingTally = { pages: 0, tabs: 0, browsingMs: 0 };

export class BrowserSession {
  private launched: Promise<Browser> | undefined;
  private readonly contexts = new Map<string, Promise<BrowserContext>>();
  private readonly logs = new WeakMap<Page, PageLog>();
  private readonly signIns = new WeakMap<BrowserContext, ContextSignIn>();
  private readonly holders = new Set<string>();
  /** Tabs given back, on a blank page, oldest first. */
  private idle: Page[] = [];
  /** Tabs opened or lent and not yet closed or given back. */
  private readonly inUse = new Set<Page>();
  private readonly histories = new WeakMap<Page, CDPSession>();
  private browsingSince = 0;
  private closed = false;
  /** How long pages take to load now and how busy the machine is: the passes' time bounds stretch with it. */
  readonly pace: BrowsePace;

  constructor(
    private readonly options: {
      executablePath?: string;
      signal?: AbortSignal;
      /** Per navigation (default 15 s). */
      navigationTimeoutMs?: number;
      /**
       * Called before each request to the target is sent; answers the function to call once it has been
       * answered. The run's measurement windows: a page loading in the browser must not be timed with a
       * probe's request any more than another agent's request may.
       */
      gate?: () => Promise<() => void>;
      /**
       * Resolves when a new page may start: rendering and scanning cost two small cores, so a page is not
       * started while another agent times the target (its requests already wait at `gate`).
       */
      beforePage?: () => Promise<void>;
      /** Runnable processes per core (default: the OS's load average); part of the pace. */
      machineLoad?: () => number;
      /**
       * Why a request to the target may never be sent (see forbiddenRequests), or undefined. Held for every
       * context: a link a walker follows, a page's own script and a control clicked all go through it,
       * whichever tool opened the tab.
       */
      refuse?: (method: string, url: string) => string | undefined;
    } = {},
  ) {
    this.pace = new BrowsePace(options.machineLoad);
  }

  /** The run's browser, launched on first use; a clear error when Chromium is missing. */
  browser(): Promise<Browser> {
    if (this.closed) return Promise.reject(new Error("the run's browser is already closed"));
    this.launched ??= (async () => {
      const executablePath = this.options.executablePath ?? findChromium();
      const { chromium } = await import("playwright-core");
      const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: 30_000 });
      this.options.signal?.addEventListener("abort", () => void browser.close().catch(() => {}), {
        once: true,
      });
      return browser;
    })();
    return this.launched;
  }

  /** The context of a role at a viewport, created once with the role's session cookies and headers. */
  context(
    role: BrowsingRole,
    origin: string,
    viewport: Viewport = DESKTOP,
    session?: string,
  ): Promise<BrowserContext> {
    // A named session (one bug-bash charter) gets a context of its own: cookies and storage stay apart.
    const key = `${role.role}\u0000${viewport.name}\u0000${session ?? ""}`;
    let context = this.contexts.get(key);
    if (!context) {
      context = (async () => {
        const signIn = new ContextSignIn(role, origin);
        const cookies = await signIn.current();
        const browser = await this.browser();
        const created = await browser.newContext({
          serviceWorkers: "block",
          ignoreHTTPSErrors: true,
          acceptDownloads: true,
          viewport: { width: viewport.width, height: viewport.height },
          isMobile: viewport.isMobile ?? false,
          hasTouch: viewport.hasTouch ?? false,
        });
        await prepareContext(created);
        // Headers other than cookies go to the target only: a bearer token must not leave its origin.
        if (Object.keys(signIn.extra).length > 0) {
          await created.route(
            (url) => url.origin === origin,
            (route) => route.continue({ headers: { ...route.request().headers(), ...signIn.extra } }),
          );
        }
        if (cookies.length > 0) await created.addCookies(cookies);
        this.signIns.set(created, signIn);
        if (this.options.gate) await gateTargetRequests(created, origin, this.options.gate);
        // Registered after the gate so it runs before it: a refused request never waits for a window.
        const { refuse } = this.options;
        if (refuse)
          await created.route(
            (url) => url.origin === origin,
            (route) =>
              refuse(route.request().method(), route.request().url())
                ? route.abort("blockedbyclient").catch(() => {})
                : route.fallback().catch(() => {}),
          );
        return created;
      })();
      this.contexts.set(key, context);
      // A context that failed to open is not kept: the next call tries again.
      context.catch(() => this.contexts.delete(key));
    }
    return context;
  }

  /** A new tab in `context`, logging from its first request; the caller closes it when done. */
  async newPage(context: BrowserContext): Promise<{ page: Page; log: PageLog }> {
    await this.readyForPage(context);
    const page = await this.createTab(context);
    this.pageOpened(page);
    return { page, log: this.freshLog(page) };
  }

  /**
   * A tab of `context` for one page, logging from its first request and counting its API calls from now
   * (apiCallsSettled): a tab given back earlier, or a new one.
   * Opening a tab costs Chromium three times the CPU of the page it then loads, and page loads are most of
   * what the browser agents do; the caller hands it back with `giveBack` (closing it works too). Listeners,
   * routes and init scripts a caller adds to the tab are its to remove or to add once per tab.
   */
  async borrowPage(context: BrowserContext): Promise<{ page: Page; log: PageLog }> {
    await this.readyForPage(context);
    // Tabs whose context closed meanwhile are gone with it.
    this.idle = this.idle.filter((tab) => !tab.isClosed());
    const index = this.idle.findIndex((tab) => tab.context() === context);
    const page = index >= 0 ? (this.idle.splice(index, 1)[0] as Page) : await this.createTab(context);
    watchedPage(page);
    this.pageOpened(page);
    return { page, log: this.freshLog(page) };
  }

  /**
   * Takes back a tab `borrowPage` lent: left on a blank document with its history cleared, so the next page
   * starts as in a new tab (no script of the last page still running, no way back to it). A tab that does
   * not get there, or beyond the few kept idle, is closed.
   */
  async giveBack(page: Page): Promise<void> {
    if (!this.inUse.delete(page)) return;
    this.pageDone();
    if (page.isClosed()) return;
    const blank = await boundedCall(
      (async () => {
        await page.goto("about:blank", { timeout: BLANK_MS });
        let history = this.histories.get(page);
        if (!history) {
          history = await page.context().newCDPSession(page);
          this.histories.set(page, history);
        }
        await history.send("Page.resetNavigationHistory");
        return true;
      })(),
      BLANK_MS,
      false,
    );
    if (!blank || this.closed || page.isClosed()) {
      await boundedCall(page.close(), BLANK_MS, undefined);
      return;
    }
    this.idle.push(page);
    while (this.idle.length > MAX_IDLE_TABS) void (this.idle.shift() as Page).close().catch(() => {});
  }

  /** Before any page starts: between measurement windows, and with the role's session renewed if need be. */
  private async readyForPage(context: BrowserContext): Promise<void> {
    await this.options.beforePage?.();
    await this.signIns.get(context)?.renewIfRestarted(context);
  }

  /** A tab with the listeners that fill its log (the current one, see freshLog). */
  private async createTab(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    browsingTally.tabs += 1;
    page.once("close", () => {
      if (this.inUse.delete(page)) this.pageDone();
    });
    const push = <T>(pick: (log: PageLog) => T[], entry: T) => {
      const log = this.logs.get(page);
      if (log && pick(log).length < MAX_LOG_ENTRIES) pick(log).push(entry);
    };
    page.on("console", (message) => {
      const where = message.location();
      push((log) => log.console, {
        type: message.type(),
        text: message.text(),
        ...(where.url ? { location: `${where.url}:${where.lineNumber + 1}:${where.columnNumber + 1}` } : {}),
      });
    });
    page.on("pageerror", (error) =>
      push((log) => log.pageErrors, {
        message: error.message,
        ...(error.stack ? { stack: error.stack } : {}),
      }),
    );
    page.on("requestfinished", async (request) => {
      const response = await request.response().catch(() => null);
      push((log) => log.network, {
        method: request.method(),
        url: request.url(),
        resourceType: request.resourceType(),
        ...(response ? { status: response.status() } : {}),
      });
    });
    // A load the browser gave up on after the answer came (a script answered 404 with a JSON body is
    // aborted for its type) still has the answer's status: it is the server's failure, not the browser's.
    page.on("requestfailed", async (request) => {
      const response = await request.response().catch(() => null);
      push((log) => log.network, {
        method: request.method(),
        url: request.url(),
        resourceType: request.resourceType(),
        ...(response ? { status: response.status() } : {}),
        failure: request.failure()?.errorText ?? "failed",
      });
    });
    page.on("dialog", (dialog) => {
      push((log) => log.dialogs, `${dialog.type()}: ${dialog.message()}`);
      // A dialog left open blocks the page; dismissing is the harmless answer (no confirm goes through).
      void dialog.dismiss().catch(() => {});
    });
    page.on("download", (download) => push((log) => log.downloads, download.suggestedFilename()));
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame() && frame.url() !== "about:blank") browsingTally.pages += 1;
    });
    return page;
  }

  /** A new, empty log for the page's next use. */
  private freshLog(page: Page): PageLog {
    const log: PageLog = { console: [], pageErrors: [], network: [], dialogs: [], downloads: [] };
    this.logs.set(page, log);
    return log;
  }

  /**
   * Opens `url` in a tab of `context` (borrowed: the caller gives it back) and waits for `load`; navigation
   * errors are answered, not thrown.
   */
  async open(context: BrowserContext, url: string, timeoutMs?: number): Promise<OpenedPage> {
    const { page, log } = await this.borrowPage(context);
    try {
      const response = await page.goto(url, {
        waitUntil: "load",
        timeout: timeoutMs ?? this.options.navigationTimeoutMs ?? 15_000,
      });
      return { page, log, response };
    } catch (error) {
      return {
        page,
        log,
        response: null,
        error: (error instanceof Error ? error.message : String(error)).split("\n")[0],
      };
    }
  }

  /** The log of a page this session opened. */
  logOf(page: Page): PageLog | undefined {
    return this.logs.get(page);
  }

  /** The time at least one page of the session is in use: a tab lent or opened, until given back or closed. */
  private pageOpened(page: Page): void {
    this.inUse.add(page);
    if (this.inUse.size === 1) this.browsingSince = performance.now();
  }

  private pageDone(): void {
    if (this.inUse.size === 0) browsingTally.browsingMs += performance.now() - this.browsingSince;
  }

  /** `holder` (an agent invocation) uses the browser until it calls `release`. */
  hold(holder: string): void {
    this.holders.add(holder);
  }

  /**
   * `holder` is done with the browser. The last holder's release closes it (its memory goes back to the
   * run); another holder's pages and contexts are never touched, and a later user launches it again.
   */
  async release(holder: string): Promise<void> {
    if (!this.holders.delete(holder) || this.holders.size > 0 || this.closed) return;
    await this.shutDown();
  }

  /** Holders using the browser now. */
  heldBy(): string[] {
    return [...this.holders];
  }

  /** Closes the contexts of one named session (a bug-bash charter that ended); the browser stays. */
  async closeSession(session: string): Promise<void> {
    for (const [key, context] of [...this.contexts]) {
      if (!key.endsWith(`\u0000${session}`)) continue;
      this.contexts.delete(key);
      await (await context.catch(() => undefined))?.close().catch(() => {});
    }
  }

  /** Closes the browser for good (the run ended). */
  async close(): Promise<void> {
    this.closed = true;
    this.holders.clear();
    await this.shutDown();
  }

  private async shutDown(): Promise<void> {
    const launched = this.launched;
    this.launched = undefined;
    this.contexts.clear();
    this.idle = [];
    if (launched) await (await launched.catch(() => undefined))?.close().catch(() => {});
  }
}

const SESSION_KEY = "browser:session";

/**
 * The run's browser session: one per run, closed when the run ends (or its signal aborts). The agent
 * invocation asking holds it until the invocation ends.
 */
export function browserSessionFor(context: ToolContext): BrowserSession {
  let session = context.shared.get(SESSION_KEY) as BrowserSession | undefined;
  if (!session) {
    const windows = quietWindowsOf(context);
    const sender = {};
    session = new BrowserSession({
      signal: context.signal,
      // What the HTTP client never sends, the browser does not either, whichever tool drives it.
      refuse: forbiddenRequests(context.target?.profile),
      gate: () => windows.enter(sender),
      beforePage: () => windows.betweenWindows(),
    });
    context.shared.set(SESSION_KEY, session);
    const opened = session;
    onRunEnd(context, () => opened.close());
  }
  const { invocation } = context;
  if (invocation !== undefined && !session.heldBy().includes(invocation)) {
    session.hold(invocation);
    const held = session;
    onAgentEnd(context, () => held.release(invocation));
  }
  return session;
}
