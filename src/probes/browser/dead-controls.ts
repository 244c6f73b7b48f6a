import type { Page } from "playwright-core";
import { NEVER_FOLLOW } from "../pages/urls.ts";
import { boundedCall, EVALUATE_MS } from "./bounded-call.ts";
import { destructiveReason } from "./destructive-controls.ts";
import type { LoadedPage } from "./page-load.ts";
import { stretchedWait } from "./page-load.ts";

// Controls that do nothing. A visible, enabled button outside any form is clicked once and watched for a
// second (longer on a busy machine; the watch ends at the first effect): a request, a URL change, a DOM
// mutation, a dialog, a download, a popup, one of the side effects page-load.ts marks (clipboard, storage,
// history, programmatic focus or scroll), or, when none of those, a page that looks different afterwards,
// means it works. Controls whose name sounds like it ends a session, moves money or destroys something are
// never clicked, and neither are controls a form owns (their journey is the form's) or ones the browser
// drives natively (popover and command targets).

export interface Control {
  /** A CSS path that finds the control again on a fresh load. */
  selector: string;
  /** Its accessible name as a person reads it. */
  name: string;
  tag: string;
}

export interface ClickOutcome {
  /** False when the click could not happen (hidden, covered, detached): no judgement then. */
  clicked: boolean;
  /** What the click caused; empty when nothing. */
  effects: string[];
  /** Uncaught exceptions raised while the click was watched. */
  exceptions: string[];
}

export const RISKY_CONTROL =
  /delete|remove|sign[\s_-]?(?:out|off)|log[\s_-]?(?:out|off)|\bpay|purchase|\bbuy\b|checkout|cancel|archive|reset|revoke|unsubscribe|close\s+(?:my\s+)?account|deactivate|destroy|discard|erase|wipe|terminate|clear|disable|\bban\b|\bblock\b|transfer|donate|place\s+order|confirm\s+order|leave|\bexit\b|\bquit\b/i;

// What a person takes for a control, in the forms pages give it: a button, anything with the button role,
// a link that goes nowhere on its own (`href="#"`, `javascript:void(0)`, no href but a handler), an input
// button, an element with an inline click handler, and, in pages that build controls from plain elements
// (a styled div or span, common in SPA component libraries), the outermost element that shows the pointer
// cursor a link or button shows. Real links (an href that leads somewhere) are the link checker's, form
// fields are not controls.
const CONTROL_SELECTOR =
  'button, [role="button"], a[href="#"], a[href^="javascript:" i], a:not([href])[onclick], a:not([href])[tabindex], input[type="button"], [onclick]:not(a, input, select, textarea, label, option, form, body, html)';
/** Elements that are controls (or fields) by their tag: a pointer cursor on them or inside them says nothing more. */
const NATIVE_INTERACTIVE =
  'a, button, input, select, textarea, label, summary, option, [onclick], [contenteditable], [role="button"], [role="link"], [role="menuitem"], [role="tab"], [role="option"], [role="checkbox"], [role="radio"], [role="switch"], [role="treeitem"]';
/** How many elements of a page are read for a pointer cursor: enough for a page, bounded for a huge one. */
const MAX_ELEMENTS_READ = 4000;
/** How long a click is watched: a second, longer while the machine is slow (a slow page load says so). */
const WATCH_MS = 1000;
const MAX_WATCH_MS = 3000;
/** Generous: on a busy machine a visible control can take seconds to be actionable, and a miss judges nothing. */
const ACTION_TIMEOUT_MS = 5000;
/** How often a click's cheap signals (URL, requests, dialogs, popups) are looked at while it is watched. */
const POLL_MS = 100;
/** How often the page itself is asked whether its DOM or side effects moved. */
const READ_EVERY_MS = 300;

/** The controls of the page worth clicking, at most `limit`, in document order. */
export async function clickableControls(page: Page, limit = 12): Promise<Control[]> {
  const reading = page.evaluate(
    ({ selector, native, maxRead }) => {
      const elements = [...document.querySelectorAll(selector)];
      const listed = new Set(elements);
      // Styled elements acting as controls: the outermost one showing a pointer, outside any native one.
      const all = document.body ? document.body.getElementsByTagName("*") : [];
      for (let index = 0; index < Math.min(all.length, maxRead); index += 1) {
        const element = all[index] as HTMLElement;
        if (listed.has(element) || element.closest(native) || element.closest("form")) continue;
        if (getComputedStyle(element).cursor !== "pointer") continue;
        const parent = element.parentElement;
        if (parent && parent !== document.body && getComputedStyle(parent).cursor === "pointer") continue;
        if (!(element.getAttribute("aria-label") || element.textContent || "").trim()) continue;
        elements.push(element);
        listed.add(element);
      }
      elements.sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
      const pathOf = (element: Element): string => {
        const parts: string[] = [];
        let node: Element | null = element;
        while (node && node !== document.documentElement) {
          if (node.id && /^[A-Za-z][\w-]*$/.test(node.id)) {
            parts.unshift(`#${node.id}`);
            break;
          }
          const tag = node.tagName.toLowerCase();
          const parent: Element | null = node.parentElement;
          const index = parent
            ? [...parent.children].filter((child) => child.tagName === node?.tagName).indexOf(node) + 1
            : 1;
          parts.unshift(`${tag}:nth-of-type(${index})`);
          node = parent;
        }
        return parts.join(" > ");
      };
      return elements
        .filter((element) => {
          const html = element as HTMLElement;
          if (html.closest("form") || html.hasAttribute("form")) return false;
          if (html.hasAttribute("popovertarget") || html.hasAttribute("commandfor")) return false;
          if ((html as HTMLButtonElement).disabled || html.getAttribute("aria-disabled") === "true")
            return false;
          const box = html.getBoundingClientRect();
          const style = getComputedStyle(html);
          return box.width > 0 && box.height > 0 && style.visibility !== "hidden" && style.display !== "none";
        })
        .map((element) => {
          const html = element as HTMLElement;
          const name = (
            html.getAttribute("aria-label") ||
            html.textContent ||
            (html as HTMLInputElement).value ||
            html.getAttribute("title") ||
            ""
          )
            .replace(/\s+/g, " ")
            .trim()
            .slice(0, 80);
          return { selector: pathOf(element), name, tag: element.tagName.toLowerCase() };
        });
    },
    { selector: CONTROL_SELECTOR, native: NATIVE_INTERACTIVE, maxRead: MAX_ELEMENTS_READ },
  );
  const found = await boundedCall(reading, EVALUATE_MS, [] as Control[]);
  // Controls repeated under one name (an "Edit" per row) run one handler: the first stands for them all,
  // so a page of many rows does not use up the clicks before its other controls.
  const names = new Set<string>();
  return found
    .filter((control) => {
      if (
        RISKY_CONTROL.test(control.name) ||
        NEVER_FOLLOW.test(control.name) ||
        destructiveReason(control.name)
      )
        return false;
      if (control.name === "") return true;
      const key = `${control.tag} ${control.name.toLowerCase()}`;
      if (names.has(key)) return false;
      names.add(key);
      return true;
    })
    .slice(0, limit);
}

/** Clicks `control` and reports what it caused within about a second (less once something happened). */
export async function clickAndWatch(loaded: LoadedPage, control: Control): Promise<ClickOutcome> {
  const { page, log } = loaded;
  const target = page.locator(control.selector).first();
  const outcome: ClickOutcome = { clicked: false, effects: [], exceptions: [] };
  try {
    if (!(await target.isVisible())) return outcome;
    // Scroll first and let it settle: the scroll a click needs is not the control's doing.
    await target.scrollIntoViewIfNeeded({ timeout: ACTION_TIMEOUT_MS });
    // Hover first: a hover style is not the click's doing, and the "before" picture must include it.
    await target.hover({ timeout: ACTION_TIMEOUT_MS });
    await page.waitForTimeout(100);
    const watching = page.evaluate(() => {
      const state = window as unknown as { __qaasMutations: number; __qaasObserver?: MutationObserver };
      state.__qaasObserver?.disconnect();
      state.__qaasMutations = 0;
      state.__qaasObserver = new MutationObserver((records) => {
        state.__qaasMutations += records.length;
      });
      state.__qaasObserver.observe(document, {
        subtree: true,
        childList: true,
        attributes: true,
        characterData: true,
      });
    });
    // No watcher, no judgement: a page that does not answer is not called dead.
    if (
      (await boundedCall(
        watching.then(() => true),
        EVALUATE_MS,
        false,
      )) === false
    )
      return outcome;
  } catch {
    return outcome;
  }
  const picture = await page.screenshot({ timeout: 5000 }).catch(() => undefined);
  const before = {
    url: comparableUrl(page.url()),
    requests: loaded.requestsStarted(),
    dialogs: log.dialogs.length,
    downloads: log.downloads.length,
    errors: log.pageErrors.length,
    activity: await activityCount(page),
  };
  let popups = 0;
  const onPopup = (): void => {
    popups += 1;
  };
  page.on("popup", onPopup);
  try {
    await target.click({ timeout: ACTION_TIMEOUT_MS });
    outcome.clicked = true;
  } catch {
    page.off("popup", onPopup);
    return outcome;
  }
  await watchForEffect(loaded, before, () => popups > 0, stretchedWait(loaded, WATCH_MS, MAX_WATCH_MS, 1));
  page.off("popup", onPopup);
  const effects = outcome.effects;
  if (page.isClosed()) effects.push("the page closed");
  else {
    if (comparableUrl(page.url()) !== before.url) effects.push(`URL changed to ${page.url()}`);
    // A navigation replaced the document (or the page stopped answering): something happened.
    const mutations = await boundedCall(
      page.evaluate(() => (window as unknown as { __qaasMutations?: number }).__qaasMutations ?? 0),
      EVALUATE_MS,
      1,
    );
    if (mutations > 0) effects.push(`${mutations} DOM mutation(s)`);
    if ((await activityCount(page)) !== before.activity) effects.push("a side effect without DOM change");
  }
  const requests = loaded.requestsStarted() - before.requests;
  if (requests > 0) effects.push(`${requests} request(s)`);
  if (log.dialogs.length > before.dialogs) effects.push("a dialog");
  if (log.downloads.length > before.downloads) effects.push("a download");
  if (popups > 0) effects.push("a popup");
  // Last resort, only when nothing else moved: a menu shown by CSS alone (:focus-within) changes pixels only.
  if (effects.length === 0 && picture && !page.isClosed()) {
    const after = await page.screenshot({ timeout: 5000 }).catch(() => undefined);
    // No second picture is no proof of nothing: count it as a change rather than risk a false finding.
    if (!after?.equals(picture)) effects.push("the page looks different");
  }
  outcome.exceptions = log.pageErrors.slice(before.errors).map((error) => error.message);
  return outcome;
}

/**
 * Waits up to `watchMs` after a click, ending as soon as the click shows an effect: most controls work,
 * and a working one then costs a tenth of a second instead of the whole watch. Only a control that stays
 * inert is watched to the end, which is where a verdict needs the time.
 */
async function watchForEffect(
  loaded: LoadedPage,
  before: { url: string; requests: number; dialogs: number; downloads: number; activity: number },
  popped: () => boolean,
  watchMs: number,
): Promise<void> {
  const { page, log } = loaded;
  const until = Date.now() + watchMs;
  let lastRead = Date.now();
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    if (
      page.isClosed() ||
      popped() ||
      comparableUrl(page.url()) !== before.url ||
      loaded.requestsStarted() > before.requests ||
      log.dialogs.length > before.dialogs ||
      log.downloads.length > before.downloads
    )
      return;
    // Reading the page is a round trip to the renderer: a few times a second is enough.
    if (Date.now() - lastRead < READ_EVERY_MS) continue;
    lastRead = Date.now();
    const mutations = await boundedCall(
      page.evaluate(() => (window as unknown as { __qaasMutations?: number }).__qaasMutations ?? 0),
      EVALUATE_MS,
      0,
    );
    if (mutations > 0 || (await activityCount(page)) !== before.activity) return;
  }
}

async function activityCount(page: Page): Promise<number> {
  return boundedCall(
    page.evaluate(() => (window as unknown as { __qaasActivity?: number }).__qaasActivity ?? 0),
    EVALUATE_MS,
    -1,
  );
}

/** `/page#` and `/page` are the same place: an `href="#"` that does nothing only adds an empty fragment. */
function comparableUrl(url: string): string {
  return url.replace(/#$/, "");
}
