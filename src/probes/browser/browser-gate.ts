import type { BrowserContext, Page, Request } from "playwright-core";

// The run's measurement windows reach into the browser: each request a page makes to the target waits at
// the gate while another agent times the target, and tells the gate when it has been answered (or can no
// longer be), so that a window never waits on a request that will not end.

/**
 * The longest a browser request counts as in flight. A tab closed mid-load, or a request the browser makes
 * for itself (an icon), may never report that it ended; a measurement window must not wait on it forever.
 */
const MAX_IN_FLIGHT_MS = 20_000;

/**
 * Holds each request to `origin` until `gate` lets it go, and tells the gate when it has been answered, or
 * its tab or context closed, or it has been open for MAX_IN_FLIGHT_MS. Registered last on the context so it
 * runs first; it passes the request on to the other handlers.
 */
export async function gateTargetRequests(
  context: BrowserContext,
  origin: string,
  gate: () => Promise<() => void>,
): Promise<void> {
  const open = new Map<Request, () => void>();
  // Per tab, its requests still open: a tab lives for many pages (tabs are reused), so each leaves the set
  // when it ends.
  const openByPage = new Map<Page, Set<Request>>();
  // Requests that ended while they waited at the gate: a tab that moved on to another page (tabs are reused)
  // cancels the last page's requests, and no event will come once they pass the gate.
  const endedAtGate = new WeakSet<Request>();
  let closed = false;
  const done = (request: Request) => {
    const leave = open.get(request);
    if (!leave) {
      endedAtGate.add(request);
      return;
    }
    open.delete(request);
    const page = pageOf(request);
    if (page) openByPage.get(page)?.delete(request);
    leave();
  };
  context.on("requestfinished", done);
  context.on("requestfailed", done);
  context.on("close", () => {
    closed = true;
    for (const leave of open.values()) leave();
    open.clear();
  });
  await context.route(
    (url) => url.origin === origin,
    async (route) => {
      const request = route.request();
      const leave = await gate();
      // A request whose tab or context closed while it waited at the gate is never sent, and no event will
      // say it ended: left open, it would count as in flight for the rest of the run, and every measurement
      // window after it would wait its whole drain bound for it.
      const page = pageOf(request);
      if (closed || page?.isClosed() || endedAtGate.has(request)) return leave();
      const timer = setTimeout(() => done(request), MAX_IN_FLIGHT_MS);
      timer.unref();
      open.set(request, () => {
        clearTimeout(timer);
        leave();
      });
      // Requests cut off by their tab closing report no end either: the tab's close ends them.
      if (page) {
        let requests = openByPage.get(page);
        if (!requests) {
          const ofPage = new Set<Request>();
          openByPage.set(page, ofPage);
          page.once("close", () => {
            openByPage.delete(page);
            for (const cutOff of ofPage) done(cutOff);
          });
          requests = ofPage;
        }
        requests.add(request);
      }
      await route.fallback().catch(() => done(request));
    },
  );
}

/** The tab a request belongs to; undefined for the browser's own requests (a service worker, an icon). */
function pageOf(request: Request): Page | undefined {
  try {
    return request.frame().page();
  } catch {
    return undefined;
  }
}
