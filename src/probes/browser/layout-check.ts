import type { BrowserContext } from "playwright-core";
import type { BrowserSession } from "./browser-session.ts";
import type { LayoutFault, Overflow } from "./layout-measure.ts";
import { faultKey, measureLayout } from "./layout-measure.ts";
import type { LoadOptions } from "./page-load.ts";
import { closePage, loadPage } from "./page-load.ts";

// The layout pass at phone width: a page is opened, measured (sideways overflow, overlapped controls,
// clipped text), and opened again only when something was found; what the second load shows again is
// answered, the rest was a page still settling.

export interface FaultPair {
  first: LayoutFault;
  second: LayoutFault;
}

export interface ConfirmedLayout {
  overflow?: { first: Overflow; second: Overflow };
  faults: FaultPair[];
  /** The whole page at the first load, when it showed a fault. */
  screenshot?: Uint8Array;
}

/** The faults of a first load that a second load shows again. */
export function sameFaults(first: readonly LayoutFault[], second: readonly LayoutFault[]): FaultPair[] {
  const again = new Map(second.map((fault) => [faultKey(fault), fault]));
  return first.flatMap((fault) => {
    const same = again.get(faultKey(fault));
    return same ? [{ first: fault, second: same }] : [];
  });
}

/** Loads `url` (in a phone-width context) twice; what both loads show is answered. */
export async function confirmedLayout(
  session: BrowserSession,
  context: BrowserContext,
  url: string,
  load: LoadOptions,
): Promise<ConfirmedLayout | undefined> {
  const measure = async (withScreenshot: boolean) => {
    const loaded = await loadPage(session, context, url, load);
    try {
      if (loaded.error || (loaded.status ?? 0) >= 400) return undefined;
      const layout = await measureLayout(loaded.page, { sideways: true });
      if (!layout.overflow && layout.faults.length === 0) return undefined;
      if (!withScreenshot) return { layout };
      const screenshot = await loaded.page
        .screenshot({ fullPage: true, timeout: 5000 })
        .catch(() => undefined);
      return { layout, ...(screenshot ? { screenshot } : {}) };
    } finally {
      await closePage(session, loaded);
    }
  };
  const first = await measure(true);
  if (!first) return undefined;
  const second = await measure(false);
  if (!second) return undefined;
  const overflow =
    first.layout.overflow && second.layout.overflow
      ? { first: first.layout.overflow, second: second.layout.overflow }
      : undefined;
  const faults = sameFaults(first.layout.faults, second.layout.faults);
  if (!overflow && faults.length === 0) return undefined;
  return {
    ...(overflow ? { overflow } : {}),
    faults,
    ...(first.screenshot ? { screenshot: first.screenshot } : {}),
  };
}
