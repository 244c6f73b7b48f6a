import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import { browserSessionFor } from "../browser/browser-session.ts";
import { mayFollow } from "../pages/urls.ts";
import { guideFinding } from "./guide-finding.ts";
import { type GuideScope, userOf } from "./guide-scope.ts";
import { getPageTemplates, hasParameters, mayBeFeaturePage, pathOnly, templateOf } from "./path-templates.ts";
import { type RenderedPage, renderPage } from "./rendered-page.ts";
import { servedPage } from "./served-page.ts";
import type { RoleGraph } from "./ui-graph.ts";

// dead-end: a page reached from the UI entry that offers no way on and no way back: in the rendered DOM
// no same-origin link other than itself, no form, no navigation landmark, and no button or clickable
// element a script could navigate with. Only the browser's view counts (a script may render the menu), so
// the check does not run on the crawl fallback. Confirmed on a second instance of the same template (one
// the walk opened, else one it saw linked or the crawl mapped for the role), or, when there is none, on a
// fresh load of the same page.

export interface DeadEndStats {
  pages_judged: number;
  skipped: Record<string, string[]>;
  flagged: string[];
  ran: boolean;
}

/** Why the rendered page still offers a way on, or undefined when it offers none. */
export function wayOn(page: RenderedPage): string | undefined {
  const self = pathOnly(page.finalPath.startsWith("/") ? page.finalPath : page.path);
  const other = page.links.find((link) => pathOnly(link) !== self && pathOnly(link) !== pathOnly(page.path));
  if (other) return `a link to ${other}`;
  if (page.forms.length > 0) return "a form";
  if (page.navigationLandmarks > 0) return "a navigation landmark";
  if (page.controls > 0) return "a button or clickable control";
  return undefined;
}

function isJudgeable(page: RenderedPage): boolean {
  return page.html && page.status === 200 && !page.error && page.finalPath.startsWith("/");
}

export async function findDeadEnds(
  scope: GuideScope,
): Promise<{ candidates: EnvelopeDraft[]; stats: DeadEndStats }> {
  const stats: DeadEndStats = { pages_judged: 0, skipped: {}, flagged: [], ran: scope.graph.rendered };
  const candidates: EnvelopeDraft[] = [];
  if (!scope.graph.rendered) return { candidates, stats };
  const templates = getPageTemplates(scope.run.map);
  const done = new Set<string>();
  for (const walk of scope.graph.roles) {
    for (const page of walk.pages) {
      if (!isJudgeable(page)) continue;
      stats.pages_judged += 1;
      const template = templateOf(page.finalPath, templates);
      if (done.has(template) || wayOn(page)) continue;
      if (!mayBeFeaturePage(template) && template !== "/") {
        note(stats, "not a feature page", template);
        continue;
      }
      done.add(template);
      if (onlyDetached(walk, page)) {
        note(stats, "opened in a new tab or a frame only", template);
        continue;
      }
      if (Date.now() >= scope.deadline || scope.run.context.signal.aborted) {
        note(stats, "out of time", template);
        continue;
      }
      const draft = await confirmDeadEnd(scope, walk, page, template, templates);
      if (typeof draft === "string") note(stats, draft, template);
      else {
        stats.flagged.push(template);
        candidates.push(draft);
      }
    }
  }
  return { candidates, stats };
}

/** Every link to the page opens it in a new tab or a frame: closing the tab is its way back. */
function onlyDetached(walk: RoleGraph, page: RenderedPage): boolean {
  const target = pathOnly(page.path);
  const linking = walk.pages.filter((each) => each.links.some((link) => pathOnly(link) === target));
  return (
    linking.length > 0 &&
    linking.every((each) => each.detachedLinks.some((link) => pathOnly(link) === target))
  );
}

function note(stats: DeadEndStats, reason: string, template: string): void {
  const list = stats.skipped[reason] ?? [];
  if (list.length < 50) list.push(template);
  stats.skipped[reason] = list;
}

/** The second look: another page of the template, else the same page loaded afresh, must be a dead end too. */
async function confirmDeadEnd(
  scope: GuideScope,
  walk: RoleGraph,
  page: RenderedPage,
  template: string,
  templates: string[],
): Promise<EnvelopeDraft | string> {
  const role = scope.roles.find((each) => each.role === walk.role);
  if (!role) return "role not available";
  const opened = walk.pages.find(
    (other) =>
      other !== page &&
      isJudgeable(other) &&
      pathOnly(other.finalPath) !== pathOnly(page.finalPath) &&
      templateOf(other.finalPath, templates) === template,
  )?.finalPath;
  const session = browserSessionFor(scope.run.context);
  const browsing = await session.context(role, scope.graph.origin);
  const load = (path: string) =>
    renderPage(session, browsing, scope.graph.origin, path, { screenshot: true });
  // A walk cut short by its time bound may not have opened a second record's page although it saw one
  // linked (or the crawl mapped one for the role): that page is opened now, and only if it does not answer
  // a page is the same page loaded afresh instead.
  const tried = opened ?? otherInstance(scope, walk, page, template, templates);
  const triedLoad = tried ? await load(tried) : undefined;
  const sibling = triedLoad && (opened || isJudgeable(triedLoad.page)) ? tried : undefined;
  const again = sibling && triedLoad ? triedLoad : await load(page.finalPath);
  const second = sibling ?? page.finalPath;
  if (!isJudgeable(again.page)) return "the second load did not answer a page";
  const offered = wayOn(again.page);
  if (offered) return `the second load offers ${offered}`;
  const served = await servedPage(
    scope.run,
    userOf(scope, walk.role),
    new URL(page.finalPath, scope.graph.origin).href,
  );
  if (!served?.ok) return `typed, it is not a working page (${served?.reason ?? "not sent"})`;
  const from = walk.pages.find((each) => each.links.some((link) => pathOnly(link) === pathOnly(page.path)));
  return guideFinding(scope.run, {
    defectClass: "dead-end",
    template,
    title: `Page ${template} offers no way on or back`,
    summary: `${page.finalPath}, reached from the UI entry ${scope.graph.entry} as ${walk.role}${from ? ` (linked from ${from.path})` : ""}, renders with no link to another page, no form, no navigation landmark and no button or clickable control; ${sibling ? `a second page of the same template, ${second}, is the same` : "a fresh load of the page is the same"}. A person who lands there can only use the browser's back button or retype an address.`,
    impact:
      "People reaching this page are stranded: the application offers no way back to where they came from.",
    severity: "low",
    // A page without parameters has no sibling to compare: a fresh load is the only second look there is.
    confidence: sibling || !hasParameters(template) ? 0.75 : 0.65,
    exchanges: [{ label: "page-as-served", exchange: served.exchange }],
    facts: {
      template,
      role: walk.role,
      pages: [page.finalPath, ...(sibling ? [second] : [])],
      linked_from: from?.path ?? null,
      rendered: {
        first: summaryOf(page),
        second: summaryOf(again.page),
      },
    },
    ...(again.screenshot ? { screenshot: again.screenshot } : {}),
    steps: [
      `Open ${scope.graph.entry} as ${walk.role}${from ? ` and follow the link on ${from.path}` : ""} to ${page.finalPath}.`,
      "Look for any link, menu, form or button on the rendered page: there is none.",
      ...(sibling ? [`Open ${second}: the same.`] : []),
    ],
  });
}

/** Another page of the template the role saw linked or was mapped to, not opened by the walk. */
function otherInstance(
  scope: GuideScope,
  walk: RoleGraph,
  page: RenderedPage,
  template: string,
  templates: readonly string[],
): string | undefined {
  const mapped = scope.run.map.pages
    .filter((each) => (each.status ?? 200) < 400 && (!each.roles?.length || each.roles.includes(walk.role)))
    .map((each) => each.path);
  const seen = [...walk.reached, ...walk.pages.flatMap((each) => each.links), ...mapped];
  const self = pathOnly(page.finalPath);
  return seen.find(
    (path) =>
      path.startsWith("/") &&
      mayFollow(path) &&
      pathOnly(path) !== self &&
      pathOnly(path) !== pathOnly(page.path) &&
      templateOf(path, templates) === template,
  );
}

function summaryOf(page: RenderedPage) {
  return {
    path: page.finalPath,
    status: page.status ?? null,
    links: page.links,
    forms: page.forms,
    navigation_landmarks: page.navigationLandmarks,
    controls: page.controls,
  };
}
