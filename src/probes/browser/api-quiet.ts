import type { Page, Request as PlaywrightRequest } from "playwright-core";

// When a page has done what its own script does on load: its API calls and scripts have been quiet for a
// moment. Playwright's `networkidle` also waits on images, fonts and analytics, 500 ms after the last of
// them, which on a page of many assets is seconds per page and tells nothing about what the script fetched.

/** The page's own calls to an API. */
export const API_TYPES = new Set(["xhr", "fetch", "eventsource"]);

/**
 * How long a page's API calls and scripts must have been quiet before it counts as settled. A script that
 * calls its API once it has rendered does so within a few frames, and a lazily loaded chunk that will call
 * it is a script request in flight.
 */
const API_QUIET_MS = 250;
const POLL_MS = 50;
/** What can still lead to an API call: the calls themselves, and scripts (lazily loaded chunks, frames). */
const SETTLING_TYPES = new Set([...API_TYPES, "script", "document"]);
const pendingCalls = new WeakMap<Page, { inFlight: number; lastActivity: number }>();

/**
 * A tab whose own API calls (fetch, XHR) and scripts are counted as they start and end; counted afresh from
 * now when the tab was watched before (a reused tab).
 */
export function watchedPage(page: Page): Page {
  const watched = pendingCalls.has(page);
  pendingCalls.set(page, { inFlight: 0, lastActivity: Date.now() });
  if (watched) return page;
  const isCall = (request: PlaywrightRequest) => SETTLING_TYPES.has(request.resourceType());
  page.on("request", (request) => {
    const state = pendingCalls.get(page);
    if (!state || !isCall(request)) return;
    state.lastActivity = Date.now();
    // An event stream stays open as long as the page does: its start is activity, never a pending call.
    if (request.resourceType() !== "eventsource") state.inFlight += 1;
  });
  const ended = (request: PlaywrightRequest) => {
    const state = pendingCalls.get(page);
    if (!state || !isCall(request) || request.resourceType() === "eventsource") return;
    state.inFlight = Math.max(0, state.inFlight - 1);
    state.lastActivity = Date.now();
  };
  page.on("requestfinished", ended);
  page.on("requestfailed", ended);
  return page;
}

/**
 * Waits (from now: the page has loaded) until no API call or script of a `watchedPage` is in flight and
 * none has started for API_QUIET_MS, or `maxMs` at most; at once when the tab is closed. With
 * `inFlightMs`, a call still open at `maxMs` is waited for up to that long from the load: on a busy target
 * the one call that fetches the page's records is often the slow one, and reading the DOM before it answers
 * sees a page without them. Answers whether the page settled.
 */
export async function apiCallsSettled(page: Page, maxMs: number, inFlightMs = maxMs): Promise<boolean> {
  const state = pendingCalls.get(page);
  if (!state) return true;
  const loaded = Date.now();
  const giveUp = loaded + maxMs;
  const lastChance = loaded + Math.max(maxMs, inFlightMs);
  while (!page.isClosed()) {
    const now = Date.now();
    const quietSince = Math.max(state.lastActivity, loaded);
    if (state.inFlight === 0 && now - quietSince >= API_QUIET_MS) return true;
    // Past the bound, a page that keeps starting calls is as settled as it gets once none is open.
    if (now >= giveUp && (state.inFlight === 0 || now >= lastChance)) return state.inFlight === 0;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
}
