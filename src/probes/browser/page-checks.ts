import type { BrowserContext } from "playwright-core";
import type { AxeViolation } from "./accessibility-scan.ts";
import { blockingViolations } from "./accessibility-scan.ts";
import type { FailedAsset, RenderedLink } from "./broken-links.ts";
import { checkTarget, failedAssets, isBrokenStatus, renderedLinks } from "./broken-links.ts";
import type { BrowserSession, NetworkEntry } from "./browser-session.ts";
import type { ConsoleError } from "./console-errors.ts";
import { consoleErrorsOf } from "./console-errors.ts";
import type { ClickOutcome, Control } from "./dead-controls.ts";
import { clickAndWatch, clickableControls } from "./dead-controls.ts";
import type { FaultPair } from "./layout-check.ts";
import { sameFaults } from "./layout-check.ts";
import type { LayoutFault } from "./layout-measure.ts";
import { measureLayout } from "./layout-measure.ts";
import type { LoadedPage, LoadOptions } from "./page-load.ts";
import { closePage, loadPage } from "./page-load.ts";

// One page as one role at desktop width: a first load finds candidates, a second, fresh load confirms
// them (the same error again, the same axe rule, the control still inert, the same request failing, the
// same layout fault), and only what both loads agree on is answered. Links are only collected here;
// browse-pages checks each target once per role.

export const BROWSER_CHECKS = [
  "console",
  "links",
  "accessibility",
  "controls",
  "layout",
  "background",
] as const;
export type BrowserCheck = (typeof BROWSER_CHECKS)[number];

export interface PageVisit {
  url: string;
  checks: ReadonlySet<BrowserCheck>;
  load: LoadOptions;
  /** Controls (name + selector) already seen working elsewhere: not clicked again. */
  workingControls: Set<string>;
  /**
   * Controls (template + name) another role already clicked on a page of this template: judged once. A
   * later role's page mostly shows the same controls, and each click costs over a second of watching.
   */
  judgedControls: Set<string>;
  /** The page's path template, for `judgedControls`. */
  template: string;
  /**
   * False when another role's page of this template was already scanned by axe and measured for layout
   * faults: both follow the markup, which roles mostly share.
   */
  markupChecks?: boolean;
  maxControls: number;
  /**
   * When clicking stops (epoch ms): the page's share of the pass's time. Controls left then are not judged
   * here (another role's visit of the template may judge them), so one page of many controls does not use
   * up the time of the pages after it.
   */
  controlsUntil?: number;
}

export interface ConfirmedPage {
  skipped?: string;
  status?: number;
  screenshot?: Uint8Array;
  consoleErrors: Array<{ first: ConsoleError; second: ConsoleError }>;
  backgroundErrors: Array<{ first: NetworkEntry; second: NetworkEntry }>;
  assets: Array<{ asset: FailedAsset; recheck: number }>;
  violations: Array<{ first: AxeViolation; second: AxeViolation }>;
  deadControls: Array<{ control: Control; first: ClickOutcome; second: ClickOutcome }>;
  /** Overlapped controls and clipped text at desktop width. */
  layoutFaults: FaultPair[];
  links: RenderedLink[];
  notes: string[];
  /** Controls left unclicked because the page's share of the time was spent. */
  unclicked: number;
  /** Controls inert on the first click that the confirming load did not confirm, with why. */
  unconfirmed: string[];
}

const DATA_REQUESTS = new Set(["xhr", "fetch"]);

export async function checkPage(
  session: BrowserSession,
  context: BrowserContext,
  visit: PageVisit,
): Promise<ConfirmedPage> {
  const result: ConfirmedPage = {
    consoleErrors: [],
    backgroundErrors: [],
    assets: [],
    violations: [],
    deadControls: [],
    layoutFaults: [],
    links: [],
    notes: [],
    unclicked: 0,
    unconfirmed: [],
  };
  const origin = new URL(visit.url).origin;
  let first: LoadedPage | undefined = await loadPage(session, context, visit.url, visit.load);
  try {
    if (first.error || (first.status ?? 0) >= 400) {
      result.skipped = first.error ?? `answered ${first.status}`;
      return result;
    }
    // JSON or a file shown in the browser's own viewer: not a page of the application's UI.
    if (first.contentType !== undefined && first.contentType !== "" && !/html/i.test(first.contentType)) {
      result.skipped = `not an HTML page (${first.contentType.split(";")[0]})`;
      return result;
    }
    // Sent elsewhere (a sign-in page, a canonical path): that page is checked under its own name, if mapped.
    const landed = pathnameOf(first.page.url());
    if (landed !== pathnameOf(visit.url)) {
      result.skipped = `redirected to ${landed}`;
      return result;
    }
    if (first.status !== undefined) result.status = first.status;
    const errors = visit.checks.has("console") ? consoleErrorsOf(first.log) : [];
    const background = visit.checks.has("background") ? serverErrors(first.log.network, origin) : [];
    if (visit.checks.has("links")) {
      result.links = await renderedLinks(first.page, origin);
      for (const asset of await failedAssets(first.page, first.log, origin)) {
        const recheck = await checkTarget(context.request, asset.url);
        if (isBrokenStatus(recheck.status)) result.assets.push({ asset, recheck: recheck.status as number });
      }
    }
    let violations: AxeViolation[] = [];
    if (visit.checks.has("accessibility") && visit.markupChecks !== false) {
      const scanned = await blockingViolations(first.page);
      if (typeof scanned === "string") result.notes.push(scanned);
      else violations = scanned;
    }
    // Measured before any click changes the page.
    const layout =
      visit.checks.has("layout") && visit.markupChecks !== false
        ? (await measureLayout(first.page, { sideways: false })).faults
        : [];
    // Evidence only: a page with nothing to show for itself is not photographed (a dead control found
    // below is, on the confirming load).
    if (errors.length + background.length + violations.length + layout.length + result.assets.length > 0)
      result.screenshot = await screenshotOf(first.page);
    const inert: Array<{ control: Control; outcome: ClickOutcome }> = [];
    if (visit.checks.has("controls")) {
      const controls = (await clickableControls(first.page, visit.maxControls * 2))
        .filter(
          (control) =>
            !visit.workingControls.has(controlKey(control)) &&
            !visit.judgedControls.has(judgedKey(visit.template, control)),
        )
        .slice(0, visit.maxControls);
      for (const [index, control] of controls.entries()) {
        if (visit.controlsUntil !== undefined && Date.now() > visit.controlsUntil) {
          result.unclicked = controls.length - index;
          break;
        }
        const outcome = await clickAndWatch(first, control);
        if (!outcome.clicked) continue;
        visit.judgedControls.add(judgedKey(visit.template, control));
        if (outcome.effects.length === 0) inert.push({ control, outcome });
        else visit.workingControls.add(controlKey(control));
        // A click that moved or replaced the page leaves the next control on another page: start over.
        if (movedAway(first, visit.url)) {
          await closePage(session, first);
          first = await loadPage(session, context, visit.url, visit.load);
        }
      }
    }
    await closePage(session, first);
    first = undefined;
    if (errors.length + background.length + violations.length + layout.length + inert.length === 0)
      return result;
    await confirm(session, context, visit, { errors, background, violations, layout, inert }, result);
    return result;
  } finally {
    await closePage(session, first);
  }
}

/** The second, fresh load: only candidates it shows again are kept. */
async function confirm(
  session: BrowserSession,
  context: BrowserContext,
  visit: PageVisit,
  candidates: {
    errors: ConsoleError[];
    background: NetworkEntry[];
    violations: AxeViolation[];
    layout: LayoutFault[];
    inert: Array<{ control: Control; outcome: ClickOutcome }>;
  },
  result: ConfirmedPage,
): Promise<void> {
  const origin = new URL(visit.url).origin;
  let second = await loadPage(session, context, visit.url, visit.load);
  try {
    if (second.error || (second.status ?? 0) >= 400) {
      result.notes.push(`the confirming load failed (${second.error ?? second.status}): nothing confirmed`);
      for (const { control } of candidates.inert)
        undecided(visit, result, control, "the confirming load failed");
      return;
    }
    result.screenshot ??= await screenshotOf(second.page);
    const again = consoleErrorsOf(second.log);
    for (const error of candidates.errors) {
      const same = again.find((other) => other.signature === error.signature);
      if (same) result.consoleErrors.push({ first: error, second: same });
    }
    const failing = serverErrors(second.log.network, origin);
    for (const entry of candidates.background) {
      const same = failing.find((other) => requestKey(other) === requestKey(entry));
      if (same) result.backgroundErrors.push({ first: entry, second: same });
    }
    if (candidates.violations.length > 0) {
      const rescanned = await blockingViolations(second.page);
      if (typeof rescanned !== "string")
        for (const violation of candidates.violations) {
          const same = rescanned.find((other) => other.rule === violation.rule);
          if (same) result.violations.push({ first: violation, second: same });
        }
    }
    if (candidates.layout.length > 0) {
      const again = await measureLayout(second.page, { sideways: false });
      result.layoutFaults.push(...sameFaults(candidates.layout, again.faults));
    }
    if (candidates.inert.length > 0) {
      const present = await clickableControls(second.page, 200);
      for (const { control, outcome } of candidates.inert) {
        // The same control: found at the same place with the same name, or it is not the same one.
        const same = present.find(
          (other) => other.selector === control.selector && other.name === control.name,
        );
        if (!same) {
          result.unconfirmed.push(`${control.name}: not on the confirming load`);
          continue;
        }
        let retry = await clickAndWatch(second, same);
        if (!retry.clicked) {
          // A click can fail to happen on a busy machine (the control not actionable in time): once more,
          // on a fresh load, before the candidate is left to a visit that may never come.
          await closePage(session, second);
          second = await loadPage(session, context, visit.url, visit.load);
          if (!second.error && (second.status ?? 0) < 400) retry = await clickAndWatch(second, same);
        }
        if (!retry.clicked) undecided(visit, result, control, "the confirming click could not happen");
        else if (retry.effects.length === 0)
          result.deadControls.push({ control, first: outcome, second: retry });
        else
          result.unconfirmed.push(`${control.name}: the confirming click showed ${retry.effects.join(", ")}`);
        if (movedAway(second, visit.url)) {
          await closePage(session, second);
          second = await loadPage(session, context, visit.url, visit.load);
        }
      }
    }
  } finally {
    await closePage(session, second);
  }
}

/**
 * A candidate neither confirmed nor cleared (on a busy machine a load or a click can fail): it is judged
 * again when another role visits the template, instead of being taken as judged.
 */
function undecided(visit: PageVisit, result: ConfirmedPage, control: Control, why: string): void {
  visit.judgedControls.delete(judgedKey(visit.template, control));
  result.unconfirmed.push(`${control.name}: ${why}, left for another visit`);
}

function screenshotOf(page: LoadedPage["page"]): Promise<Uint8Array | undefined> {
  return page.screenshot({ timeout: 5000 }).catch(() => undefined);
}

/** Same-origin fetch/XHR the page made on its own that the server failed (5xx). */
function serverErrors(network: readonly NetworkEntry[], origin: string): NetworkEntry[] {
  const seen = new Set<string>();
  return network.filter((entry) => {
    if (!DATA_REQUESTS.has(entry.resourceType) || (entry.status ?? 0) < 500) return false;
    if (new URL(entry.url).origin !== origin || seen.has(requestKey(entry))) return false;
    seen.add(requestKey(entry));
    return true;
  });
}

function requestKey(entry: NetworkEntry): string {
  return `${entry.method} ${new URL(entry.url).pathname}`;
}

/** A click that navigated, changed the route or closed the tab leaves the page to check behind. */
function movedAway(loaded: LoadedPage, url: string): boolean {
  if (loaded.page.isClosed()) return true;
  const [now, asked] = [new URL(loaded.page.url()), new URL(url)];
  return (
    pathnameOf(now.href) !== pathnameOf(asked.href) ||
    now.search !== asked.search ||
    now.hash.replace(/^#$/, "") !== asked.hash.replace(/^#$/, "")
  );
}

/** The path without a trailing slash, for telling a redirect from the page asked for. */
function pathnameOf(url: string): string {
  return new URL(url).pathname.replace(/\/+$/, "") || "/";
}

function judgedKey(template: string, control: Control): string {
  return `${template}\u0000${control.name}`;
}

export function controlKey(control: Control): string {
  return `${control.name}\u0000${control.selector}`;
}
