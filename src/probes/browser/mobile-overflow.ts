import type { BrowserContext, Page } from "playwright-core";
import { boundedCall, EVALUATE_MS } from "./bounded-call.ts";
import type { BrowserSession } from "./browser-session.ts";
import type { LoadOptions } from "./page-load.ts";
import { closePage, loadPage } from "./page-load.ts";

// A page that is wider than a phone's screen: the document scrolls sideways at mobile width. The tolerance
// (2 px) absorbs sub-pixel rounding; a root that hides sideways overflow is not counted. The offending element named is the widest one that sticks out past
// the viewport without an ancestor that clips or scrolls it (those do not widen the document).

export interface Overflow {
  scrollWidth: number;
  viewportWidth: number;
  /** The widest element sticking out, as a CSS selector with its width. */
  culprit?: Culprit;
}

export interface Culprit {
  selector: string;
  width: number;
  right: number;
  /**
   * When the element is part of the page's frame rather than its content (outside `main`, in a page-level
   * header, navigation, footer or aside): its place from `body` (`body > header.topbar > nav`). A frame
   * every page shares overflows on every page for one reason: browse-pages reports it once.
   */
  chrome?: string;
}

export const OVERFLOW_TOLERANCE_PX = 2;

export async function horizontalOverflow(page: Page): Promise<Overflow | undefined> {
  const measuring = page.evaluate((tolerance) => {
    // The layout viewport (the device width under a width=device-width meta tag): a phone browser zooms
    // out to fit wide content, so window.innerWidth grows with the very overflow being measured.
    const viewportWidth = document.documentElement.clientWidth;
    const scrollWidth = Math.max(document.documentElement.scrollWidth, document.body?.scrollWidth ?? 0);
    if (scrollWidth <= viewportWidth + tolerance) return undefined;
    // A root that hides sideways overflow shows no scrollbar and no zoomed-out page.
    const hides = (element: Element | null): boolean =>
      !!element && ["hidden", "clip"].includes(getComputedStyle(element).overflowX);
    if (hides(document.documentElement) || hides(document.body)) return undefined;
    const clipped = (element: Element): boolean => {
      for (let node = element.parentElement; node && node !== document.body; node = node.parentElement) {
        const overflowX = getComputedStyle(node).overflowX;
        if (overflowX !== "visible") return true;
      }
      return false;
    };
    const describe = (element: Element): string => {
      const tag = element.tagName.toLowerCase();
      if (element.id) return `${tag}#${element.id}`;
      const classes = [...element.classList].slice(0, 2);
      return classes.length > 0 ? `${tag}.${classes.join(".")}` : tag;
    };
    const chromeOf = (element: Element): string | undefined => {
      if (element.closest("main, [role='main']")) return undefined;
      const frame = element.closest(
        "header, nav, footer, aside, [role='banner'], [role='navigation'], [role='contentinfo']",
      );
      if (!frame) return undefined;
      const parts: string[] = [];
      for (let node: Element | null = element; node && node !== document.body; node = node.parentElement)
        parts.unshift(describe(node));
      return ["body", ...parts].join(" > ");
    };
    let culprit: { selector: string; width: number; right: number; chrome?: string } | undefined;
    for (const element of document.body ? document.body.querySelectorAll("*") : []) {
      const box = element.getBoundingClientRect();
      if (box.right <= viewportWidth + tolerance || box.width === 0 || clipped(element)) continue;
      if (!culprit || box.width > culprit.width) {
        const chrome = chromeOf(element);
        culprit = {
          selector: describe(element),
          width: Math.round(box.width),
          right: Math.round(box.right),
          ...(chrome ? { chrome } : {}),
        };
      }
    }
    return { scrollWidth, viewportWidth, ...(culprit ? { culprit } : {}) };
  }, OVERFLOW_TOLERANCE_PX);
  return (await boundedCall(measuring, EVALUATE_MS, undefined)) ?? undefined;
}

export interface ConfirmedOverflow {
  first: Overflow;
  second: Overflow;
  screenshot?: Uint8Array;
}

/** Loads `url` at mobile width twice; overflow is answered only when both loads show it. */
export async function confirmedOverflow(
  session: BrowserSession,
  context: BrowserContext,
  url: string,
  load: LoadOptions,
): Promise<ConfirmedOverflow | undefined> {
  const measure = async (withScreenshot: boolean) => {
    const loaded = await loadPage(session, context, url, load);
    try {
      if (loaded.error || (loaded.status ?? 0) >= 400) return undefined;
      const overflow = await horizontalOverflow(loaded.page);
      if (!overflow || !withScreenshot) return overflow ? { overflow } : undefined;
      const screenshot = await loaded.page
        .screenshot({ fullPage: true, timeout: 5000 })
        .catch(() => undefined);
      return { overflow, ...(screenshot ? { screenshot } : {}) };
    } finally {
      await closePage(session, loaded);
    }
  };
  const first = await measure(true);
  if (!first) return undefined;
  const second = await measure(false);
  if (!second) return undefined;
  return {
    first: first.overflow,
    second: second.overflow,
    ...(first.screenshot ? { screenshot: first.screenshot } : {}),
  };
}
