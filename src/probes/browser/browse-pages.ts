import type { BrowserContext } from "playwright-core";
import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { templateOfConcrete } from "../../map/inventory.ts";
import type { SystemMap } from "../../map/system-map.ts";
import type { ToolContext } from "../../tools/context.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import { forbiddenRequests } from "../http/profile-endpoints.ts";
import { probeTargetOf } from "../http/run-http.ts";
import { mayFollow } from "../pages/urls.ts";
import { webRoles } from "../pages/web-session.ts";
import { sessionPoolFor } from "../session/session-pool.ts";
import { AccessibilityBook } from "./accessibility-findings.ts";
import type { BrowsingRole } from "./browser-session.ts";
import { browserSessionFor, DESKTOP, MOBILE } from "./browser-session.ts";
import type { ConfirmedLayout } from "./layout-check.ts";
import { confirmedLayout } from "./layout-check.ts";
import { layoutFaultDraft, overflowDraft } from "./layout-findings.ts";
import { faultKey } from "./layout-measure.ts";
import { brokenLinkDrafts, LinkBook } from "./link-findings.ts";
import type { BrowserCheck } from "./page-checks.ts";
import { BROWSER_CHECKS, checkPage } from "./page-checks.ts";
import { pageDrafts } from "./page-findings.ts";
import { passDeadline } from "./pass-deadline.ts";

// BROWSER's deterministic pass: every page of the pinned map that a role reached is opened as that role,
// one page per path template (each template first as one role that reached it, the roles taking turns,
// then as the others), in the run's Chromium, and checked for console errors, broken links and assets,
// blocking accessibility violations, dead controls, failing background requests and layout faults
// (overlapped controls and clipped text at both widths, sideways overflow at phone width). Each candidate
// is confirmed on a fresh load (or a second request) before it becomes a draft. Bounded by pages per role and by total time (stretched while pages
// load slowly); every tab is closed as soon as its page is done.

export interface BrowseOptions {
  roles?: string[];
  max_pages?: number;
  max_seconds?: number;
  checks?: BrowserCheck[];
}

export interface RoleStats {
  role: string;
  pages: number;
  skipped: string[];
  linksChecked: number;
  stopped?: "max_pages" | "time" | "aborted";
  error?: string;
}

export interface BrowseStats {
  checks: BrowserCheck[];
  roles: RoleStats[];
  templates: number;
  candidates: number;
  /** Controls left unclicked on pages whose share of the time ran out. */
  controlsUnclicked: number;
  /** Controls inert on a first click that the confirming load did not confirm (the first few), with why. */
  inertUnconfirmed: string[];
  /** How far the time bound was stretched because pages loaded slowly or the machine was busy (1 = not at all). */
  stretch: number;
  /** Seconds past its own bound the pass went on while other agents were still at work. */
  overtimeSeconds: number;
  durationMs: number;
}

const MAX_CONTROLS_PER_PAGE = 8;
// A site without a document can link a few hundred targets from its pages; checked four at once (and
// still under the pass's deadline), every template's first links and most of its second and third fit.
const MAX_LINK_CHECKS_PER_ROLE = 200;
const LINKS_FLOOR_MS = 10_000;
const PAGES_AT_ONCE = 3;
const MAX_UNCONFIRMED_LISTED = 10;

export async function browsePages(
  context: ToolContext,
  options: BrowseOptions = {},
): Promise<{ candidates: EnvelopeDraft[]; stats: BrowseStats } | string> {
  const started = Date.now();
  const target = probeTargetOf(context);
  if (typeof target === "string") return target;
  const map = context.systemMap();
  if (!map) return "no system map is pinned for this run yet: MAPPER runs first (get_system_map answers it)";
  const checks = new Set<BrowserCheck>(options.checks?.length ? options.checks : BROWSER_CHECKS);
  const budgetMs = (options.max_seconds ?? 120) * 1000;
  const maxPages = options.max_pages ?? 30;
  const origin = new URL(target.baseUrl).origin;
  const session = browserSessionFor(context);
  // The bound stretches while pages load slowly, and goes on while other agents work (pass-deadline.ts).
  const deadline = passDeadline(context, session.pace, started, budgetMs);
  // Link targets are checked after a role's pages, over plain HTTP: a fifth of the time is kept for them,
  // or a slow page set would leave every link unchecked.
  const pagesDeadline = passDeadline(context, session.pace, started, budgetMs * 0.8);
  const masker = sessionPoolFor(context, target.baseUrl).masker;
  const refuse = forbiddenRequests(target.profile);
  const load = { writesAllowed: target.writesAllowed, refuse };
  const { roles } = webRoles(context, target, options.roles);
  const entry = target.profile?.ui?.entry ?? "/";

  const candidates: EnvelopeDraft[] = [];
  const seen = new Set<string>();
  const accessibility = new AccessibilityBook();
  const checkedLinks = new Set<string>();
  const layoutDone = new Set<string>();
  const workingControls = new Set<string>();
  const judgedControls = new Set<string>();
  const markupChecked = new Set<string>();
  const stats: BrowseStats = {
    checks: [...checks],
    roles: [],
    templates: 0,
    candidates: 0,
    controlsUnclicked: 0,
    inertUnconfirmed: [],
    stretch: 1,
    overtimeSeconds: 0,
    durationMs: 0,
  };
  const templatesSeen = new Set<string>();
  // A fault of the page's frame (a header every page shares) is one defect however many pages show it:
  // the first page carries it, the others are its related places.
  const frameFaults = new Map<
    string,
    { template: string; related: string[]; draft: (related: string[]) => EnvelopeDraft | undefined }
  >();
  const place = (
    chrome: string | undefined,
    key: string,
    template: string,
    draft: (related: string[]) => EnvelopeDraft | undefined,
  ) => {
    const shared = chrome ? frameFaults.get(`${key}\u0000${chrome}`) : undefined;
    if (shared) {
      if (shared.template !== template && !shared.related.includes(template)) shared.related.push(template);
    } else if (chrome) frameFaults.set(`${key}\u0000${chrome}`, { template, related: [], draft });
    else {
      const made = draft([]);
      if (made) candidates.push(made);
    }
  };

  // Every template first (each by the first role that reached it), then the same templates as the other
  // roles: a slow machine or a large app then runs out of time on repeats, not on pages never opened.
  const plans = roles.map((role) => {
    const roleStats: RoleStats = { role: role.role, pages: 0, skipped: [], linksChecked: 0 };
    stats.roles.push(roleStats);
    const pages = pagesFor(map, role.role, entry);
    if (pages.length > maxPages) roleStats.stopped = "max_pages";
    return { role, roleStats, pages: pages.slice(0, maxPages), book: new LinkBook() };
  });
  const desktops = new Map<string, Promise<BrowserContext | undefined>>();
  const desktopOf = (plan: (typeof plans)[number]): Promise<BrowserContext | undefined> => {
    let desktop = desktops.get(plan.role.role);
    if (!desktop) {
      desktop = session.context(plan.role, origin, DESKTOP).catch((error: unknown) => {
        plan.roleStats.error = (error instanceof Error ? error.message : String(error)).split("\n")[0];
        return undefined;
      });
      desktops.set(plan.role.role, desktop);
    }
    return desktop;
  };
  const order = visitOrder(plans);
  const firstVisits = order.filter((visit) => visit.first).length;
  let visitsStarted = 0;
  // A few pages at once: most of a page's time is waiting (network quiet, a second after each click).
  const visited = await mapConcurrent(order, PAGES_AT_ONCE, async ({ plan, path, template, first }) => {
    visitsStarted += 1;
    const { roleStats } = plan;
    if (context.signal?.aborted || Date.now() > pagesDeadline()) {
      roleStats.stopped = context.signal?.aborted ? "aborted" : "time";
      return undefined;
    }
    const desktop = await desktopOf(plan);
    if (!desktop) return undefined;
    roleStats.pages += 1;
    const url = new URL(path, target.baseUrl).toString();
    // Axe rules and layout follow the markup, which roles mostly share: one look per template.
    const markupChecks = !markupChecked.has(template);
    markupChecked.add(template);
    // The time left is shared among the pages left (a few run at once): on a busy machine a page's clicks
    // stop at its share, and the pages after it are still opened. A template's first visit shares it with
    // the other first visits only: another role's second look at a page is worth less than a first look.
    const visitsLeft = (first ? firstVisits : order.length) - visitsStarted + 1;
    const share = ((pagesDeadline() - Date.now()) * PAGES_AT_ONCE) / Math.max(1, visitsLeft);
    const page = await checkPage(session, desktop, {
      url,
      checks,
      load,
      workingControls,
      judgedControls,
      template,
      markupChecks,
      maxControls: MAX_CONTROLS_PER_PAGE,
      controlsUntil: Date.now() + share,
    });
    stats.controlsUnclicked += page.unclicked;
    for (const why of page.unconfirmed)
      if (stats.inertUnconfirmed.length < MAX_UNCONFIRMED_LISTED)
        stats.inertUnconfirmed.push(`${template} as ${plan.role.role}: ${why}`);
    if (page.skipped && markupChecks) markupChecked.delete(template);
    let layout: ConfirmedLayout | undefined;
    if (!page.skipped && checks.has("layout") && !layoutDone.has(template) && Date.now() < pagesDeadline()) {
      layoutDone.add(template);
      layout = await layoutOf(session, plan.role, origin, url, load);
    }
    return { plan, path, template, page, layout };
  });
  // Drafts in visiting order, whichever page finished first: the answer must not depend on timing.
  for (const visit of visited) {
    if (!visit) continue;
    const { plan, path, template, page, layout } = visit;
    templatesSeen.add(template);
    if (page.skipped) {
      plan.roleStats.skipped.push(`${path}: ${page.skipped}`);
      continue;
    }
    const scope = { context, masker, baseUrl: target.baseUrl, role: plan.role.role, path, template, seen };
    candidates.push(...pageDrafts(scope, page));
    accessibility.add(scope, page);
    plan.book.add(template, page.links);
    for (const pair of page.layoutFaults)
      place(pair.first.chrome, faultKey(pair.first), template, (related) =>
        layoutFaultDraft(scope, pair, DESKTOP, page.screenshot, related),
      );
    const overflow = layout?.overflow;
    if (overflow)
      place(overflow.first.culprit?.chrome, "overflow", template, (related) =>
        overflowDraft(scope, overflow, layout?.screenshot, related),
      );
    for (const pair of layout?.faults ?? [])
      place(pair.first.chrome, faultKey(pair.first), template, (related) =>
        layoutFaultDraft(scope, pair, MOBILE, layout?.screenshot, related),
      );
  }
  // Pages still loading at the pages' deadline can eat the links' fifth: they get a short floor of their
  // own, since a link check is one plain request and a broken link is found nowhere else.
  const linksFloor = Date.now() + session.pace.stretch() * LINKS_FLOOR_MS;
  for (const plan of plans) {
    if (!checks.has("links") || context.signal?.aborted) break;
    const desktop = desktops.has(plan.role.role) ? await desktopOf(plan) : undefined;
    if (!desktop) continue;
    const links = await brokenLinkDrafts(desktop.request, plan.book, {
      context,
      masker,
      baseUrl: target.baseUrl,
      role: plan.role.role,
      operations: map.operations,
      seen,
      checked: checkedLinks,
      refuse,
      deadline: Math.max(deadline(), linksFloor),
      maxChecks: MAX_LINK_CHECKS_PER_ROLE,
    });
    plan.roleStats.linksChecked = links.checked;
    candidates.push(...links.drafts);
  }
  candidates.push(...accessibility.drafts());
  for (const { draft, related } of frameFaults.values()) {
    const made = draft(related);
    if (made) candidates.push(made);
  }
  if (stats.roles.length > 0 && stats.roles.every((role) => role.error)) {
    return `the browser could not open a page for any role: ${stats.roles[0]?.error}`;
  }
  stats.templates = templatesSeen.size;
  stats.candidates = candidates.length;
  stats.durationMs = Date.now() - started;
  stats.stretch = Math.round(session.pace.stretch() * 100) / 100;
  stats.overtimeSeconds = Math.round(Math.max(deadline.overtimeMs(), pagesDeadline.overtimeMs()) / 1000);
  return { candidates, stats };
}

async function layoutOf(
  session: ReturnType<typeof browserSessionFor>,
  role: BrowsingRole,
  origin: string,
  url: string,
  load: Parameters<typeof confirmedLayout>[3],
) {
  try {
    return await confirmedLayout(session, await session.context(role, origin, MOBILE), url, load);
  } catch {
    return undefined;
  }
}

/**
 * The order pages are opened in: first each template once, taking the roles' pages in turn (one of each
 * role's, then the next of each), every role's HTML pages before any role's JSON or file answers (opened
 * only to be skipped), then the templates again as every other role that reached them. In turn, so that a
 * large public area does not use up the time before the signed-in roles' own pages are opened.
 */
export function visitOrder<
  P extends { pages: ReadonlyArray<{ path: string; template: string; html?: boolean }> },
>(plans: readonly P[]): Array<{ plan: P; path: string; template: string; first: boolean }> {
  type Visit = { plan: P; path: string; template: string; first: boolean };
  const first: Visit[] = [];
  const firstNotHtml: Visit[] = [];
  const again: Visit[] = [];
  const opened = new Set<string>();
  const longest = Math.max(0, ...plans.map((plan) => plan.pages.length));
  for (let index = 0; index < longest; index += 1)
    for (const plan of plans) {
      const page = plan.pages[index];
      if (!page) continue;
      const { path, template, html } = page;
      if (opened.has(template)) again.push({ plan, path, template, first: false });
      else {
        opened.add(template);
        (html === false ? firstNotHtml : first).push({ plan, path, template, first: true });
      }
    }
  return [...first, ...firstNotHtml, ...again];
}

/**
 * The pages a role reached, one per path template, in map order with the pages the crawl got JSON or a
 * file from last (a browser opens them only to skip them); pages that failed, sign-out or destroy links
 * and static files are left out. A role that reached no mapped page gets the entry page.
 */
export function pagesFor(
  map: SystemMap,
  role: string,
  entry: string,
): Array<{ path: string; template: string; html?: false }> {
  const pages: Array<{ path: string; template: string; html?: false }> = [];
  const templates = new Set<string>();
  const documentsFirst = [
    ...map.pages.filter((page) => page.html !== false),
    ...map.pages.filter((page) => page.html === false),
  ];
  for (const page of documentsFirst) {
    if (page.status !== undefined && page.status >= 400) continue;
    if (page.roles && page.roles.length > 0 && !page.roles.includes(role)) continue;
    if (!mayFollow(page.path)) continue;
    const template = templateOfConcrete(page.path.split("#")[0] ?? page.path, map.operations);
    // A hash-routed app keeps its routes after `#`: `/#/a` and `/#/b` are two pages.
    const key = page.path.includes("#") ? `${template}#${page.path.split("#")[1]}` : template;
    if (templates.has(key)) continue;
    templates.add(key);
    pages.push({
      path: page.path,
      template: page.path.includes("#") ? page.path : template,
      ...(page.html === false ? { html: false as const } : {}),
    });
  }
  if (pages.length === 0) pages.push({ path: entry, template: templateOfConcrete(entry, map.operations) });
  return pages;
}
