import type { BrowserContext, Response } from "playwright-core";
import { apiCallsSettled } from "../browser/api-quiet.ts";
import { boundedCall, EVALUATE_MS } from "../browser/bounded-call.ts";
import type { BrowserSession } from "../browser/browser-session.ts";
import type { HttpExchange } from "../http/http-types.ts";

// One look at a page for stored markers: the page loads in a tab of the reader's context, its own script
// fetches and renders, and the DOM says which markers became elements; the answers its requests got say
// which of them carried a marker, and whether the page's own HTML already did.

const NAVIGATION_MS = 10_000;
/** How long a page's own API calls and scripts may take to settle after `load`. */
const SETTLE_MS = 3000;
/** How long a call the page still waits on at SETTLE_MS may take, from `load`: a busy target answers late. */
const IN_FLIGHT_MS = 10_000;
/** How long the page's answers may still take to be read once its calls have settled. */
const READ_MS = 1000;

export interface Look {
  /** Markers present as elements. */
  shown: Map<string, number>;
  /** Per marker, the page's requests whose answers carried it. */
  carriers: Map<string, HttpExchange[]>;
  /** Markers the page's own HTML carried raw: the server-HTML check's to report, not this one's. */
  served: Set<string>;
  /** A call of the page's own was still unanswered when the DOM was read. */
  unsettled: boolean;
}

export function tagOf(marker: string): string {
  return marker.replace(/^</, "").replace(/>$/, "");
}

/**
 * Loads `url` in a tab (borrowed, given back after), lets the page's own calls settle and reads which markers
 * became elements. The tab closes when `stop` aborts (what it would see is no longer wanted).
 */
export async function look(
  session: BrowserSession,
  context: BrowserContext,
  url: string,
  markers: readonly string[],
  viewer: string | undefined,
  stop?: AbortSignal,
): Promise<Look> {
  const result: Look = { shown: new Map(), carriers: new Map(), served: new Set(), unsettled: false };
  const { page } = await session.borrowPage(context);
  const close = () => void page.close().catch(() => {});
  stop?.addEventListener("abort", close, { once: true });
  const reads: Array<Promise<void>> = [];
  const read = (response: Response): void => {
    // An event stream's body ends only when the page closes: waiting for it is the whole read bound, lost.
    const type = response.request().resourceType();
    if (!["document", "fetch", "xhr", "script"].includes(type)) return;
    reads.push(
      response
        .text()
        .then((body) => {
          // The tag is unique; a JSON answer may escape its angle brackets (`\u003c`), so the tag alone counts.
          for (const marker of markers) {
            if (!body.includes(tagOf(marker))) continue;
            const isMain = response.frame() === page.mainFrame() && type === "document";
            if (isMain && body.includes(marker)) result.served.add(marker);
            else
              result.carriers.set(marker, [
                ...(result.carriers.get(marker) ?? []),
                exchangeOf(response, body, viewer),
              ]);
          }
        })
        .catch(() => {}),
    );
  };
  page.on("response", read);
  let timer: NodeJS.Timeout | undefined;
  try {
    if (stop?.aborted) return result;
    const navigated = await page.goto(url, { waitUntil: "load", timeout: NAVIGATION_MS }).then(
      () => true,
      () => false,
    );
    // A busy target may still be sending the page's assets: a script that fetches its records on `load`
    // has not started yet, and the page would look settled without them.
    const loaded =
      navigated ||
      (await page.waitForLoadState("load", { timeout: IN_FLIGHT_MS }).then(
        () => true,
        () => false,
      ));
    result.unsettled = !(await apiCallsSettled(page, SETTLE_MS, IN_FLIGHT_MS)) || !loaded;
    // Once the calls have settled their answers are complete and read at once; the bound is for a call
    // still open when the settle gave up.
    await Promise.race([
      Promise.allSettled(reads),
      new Promise((resolve) => {
        timer = setTimeout(resolve, READ_MS);
      }),
    ]);
    const counts = await boundedCall(
      page.evaluate(
        (tags) => tags.map((tag) => document.getElementsByTagName(tag).length),
        markers.map(tagOf),
      ),
      EVALUATE_MS,
      [] as number[],
    );
    markers.forEach((marker, index) => {
      if ((counts[index] ?? 0) > 0) result.shown.set(marker, counts[index]!);
    });
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener("abort", close);
    page.off("response", read);
    await boundedCall(session.giveBack(page), 2 * EVALUATE_MS, undefined);
  }
  return result;
}

/** What the browser saw of one request, in the shape every finding records (masked when written). */
function exchangeOf(response: Response, body: string, viewer: string | undefined): HttpExchange {
  const request = response.request();
  const headers = response.headers();
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  const limit = 64 * 1024;
  return {
    sequence: 0,
    startedAt: new Date().toISOString(),
    request: {
      method: request.method(),
      url: request.url(),
      headers: request.headers(),
      ...(request.postData() ? { body: request.postData() ?? "" } : {}),
    },
    response: {
      status: response.status(),
      headers,
      setCookies: [],
      contentType: headers["content-type"] ?? "",
      body: body.slice(0, limit),
      truncated: body.length > limit,
      json,
    },
    durationMs: Math.max(0, request.timing().responseEnd),
    ...(viewer !== undefined ? { user: viewer } : {}),
  };
}
