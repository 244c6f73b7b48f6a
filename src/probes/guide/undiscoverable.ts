import type { EnvelopeDraft } from "../../envelope/envelope-draft.ts";
import type { Operation } from "../../map/system-map.ts";
import { browserSessionFor } from "../browser/browser-session.ts";
import { mayFollow } from "../pages/urls.ts";
import { guideFinding } from "./guide-finding.ts";
import { type GuideScope, seenPaths, userOf } from "./guide-scope.ts";
import { fillTemplate, matchesTemplate, mayBeFeaturePage, pathOnly, staticRuns } from "./path-templates.ts";
import { redirectInSource } from "./redirect-targets.ts";
import { renderPage } from "./rendered-page.ts";
import { absentPath, comparableBody, type ServedAnswer, servedPage, visibleText } from "./served-page.ts";
import { scriptTexts } from "./ui-graph.ts";

// undiscoverable-feature: a page the application serves (HTML 200 when typed, for a role) that nothing a
// person can reach from the UI entry leads to. Two independent signals before a candidate: no reachable
// page of any role links to it (rendered anchors, form actions, navigating attributes, redirects), and its
// path is not mentioned in those pages' HTML nor in the scripts they load, so no script builds a link to
// it either. Pages a form submission redirects to are the blind spot of a walk that never submits: a page
// that shares its first path segment with a POST form's action is left alone.

export interface UndiscoverableStats {
  templates: number;
  skipped: Record<string, string[]>;
  flagged: string[];
}

function skip(stats: UndiscoverableStats, reason: string, template: string): void {
  const list = stats.skipped[reason] ?? [];
  if (list.length < 50) list.push(template);
  stats.skipped[reason] = list;
}

/** GET page templates the map knows from any source, once each, with where they were learned. */
function pageTemplates(scope: GuideScope): Map<string, string[]> {
  const templates = new Map<string, string[]>();
  const add = (path: string, seen: readonly string[]): void => {
    const key = pathOnly(path);
    templates.set(key, [...new Set([...(templates.get(key) ?? []), ...seen])]);
  };
  const map = scope.run.map;
  for (const operation of map.operations as Operation[])
    if (operation.method.toUpperCase() === "GET" && !operation.graphql)
      add(operation.path, operation.seen_in);
  for (const route of map.routes)
    if (route.method.toUpperCase() === "GET" || route.method === "*") add(route.path, ["source"]);
  return templates;
}

/** Whether some role's walk reached the template or saw a link or form leading to it. */
function linkedAnywhere(scope: GuideScope, template: string): string | undefined {
  for (const walk of scope.graph.roles) {
    for (const reached of walk.reached)
      if (matchesTemplate(template, reached)) return `reached by ${walk.role} at ${reached}`;
    for (const page of walk.pages) {
      const link = page.links.find((each) => matchesTemplate(template, each));
      if (link) return `linked from ${page.path} (${walk.role})`;
      const form = page.forms.find((each) => matchesTemplate(template, each.action));
      if (form) return `a form action on ${page.path} (${walk.role})`;
    }
  }
  return undefined;
}

/** A POST form whose action shares the template's first segment: its answer may redirect there. */
function afterFormSubmission(scope: GuideScope, template: string): string | undefined {
  const first = pathOnly(template).split("/")[1];
  if (!first) return undefined;
  for (const walk of scope.graph.roles)
    for (const page of walk.pages)
      for (const form of page.forms)
        if (form.method === "POST" && pathOnly(form.action).split("/")[1] === first)
          return `POST ${form.action} on ${page.path}`;
  return undefined;
}

/** Where the template's literal parts all appear: in a page's HTML or in a script a page loads. */
function mentionIn(template: string, texts: Map<string, string>): string | undefined {
  const runs = staticRuns(template).map((run) => run.toLowerCase());
  const last = pathOnly(template).split("/").filter(Boolean).at(-1)?.toLowerCase() ?? "";
  const quoted = [`"${last}"`, `'${last}'`, `\`${last}\``];
  for (const [where, text] of texts) {
    const lower = text.toLowerCase();
    if (runs.length > 0 && runs.every((run) => lower.includes(run))) return where;
    // A client router names a route by its own segment (`path: "history"` under `tasks/:id`).
    if (last && quoted.some((literal) => lower.includes(literal))) return where;
  }
  return undefined;
}

export async function findUndiscoverable(
  scope: GuideScope,
): Promise<{ candidates: EnvelopeDraft[]; stats: UndiscoverableStats }> {
  const stats: UndiscoverableStats = { templates: 0, skipped: {}, flagged: [] };
  const candidates: EnvelopeDraft[] = [];
  const seen = seenPaths(scope);
  const origin = scope.graph.origin;
  let absent: Map<string, ServedAnswer | undefined> | undefined;
  let mentionTexts: Map<string, string> | undefined;

  // A walk cut short has not searched every reachable page: "nothing links to it" would be a guess. So
  // has one that opened no page of the UI at all (its entry dropped or timed out: a restarting target, a
  // busy machine).
  const cutShort = scope.graph.roles
    .filter((walk) => walk.stopped || !walk.pages.some((page) => page.html && !page.error))
    .map((walk) => `${walk.role} (${walk.stopped ?? "no page of the UI opened"})`);
  for (const [template, provenance] of pageTemplates(scope)) {
    stats.templates += 1;
    if (cutShort.length > 0) {
      skip(
        stats,
        `the walk was cut short for ${cutShort.join(", ")}: raise max_pages or max_seconds when it ran out of either`,
        template,
      );
      continue;
    }
    if (Date.now() >= scope.deadline || scope.run.context.signal.aborted) {
      skip(stats, "out of time", template);
      continue;
    }
    if (!mayBeFeaturePage(template) || !mayFollow(template)) {
      skip(stats, "not a feature page (API, sign-in, health, file or email-reached path)", template);
      continue;
    }
    const concrete = fillTemplate(template, seen);
    if (!concrete?.length) {
      skip(stats, "parameters no crawled link fills", template);
      continue;
    }
    if (linkedAnywhere(scope, template)) {
      skip(stats, "linked from a reachable page", template);
      continue;
    }
    if (afterFormSubmission(scope, template)) {
      skip(stats, "may be where a form submission redirects", template);
      continue;
    }
    const path = concrete[0] as string;
    const url = new URL(path, origin).href;
    // Which roles get a working page there: the least privileged first, as the walk ordered them.
    const served: Array<{ role: string; answer: ServedAnswer }> = [];
    for (const role of scope.roles) {
      const answer = await servedPage(scope.run, userOf(scope, role.role), url);
      if (answer?.ok) served.push({ role: role.role, answer });
    }
    const first = served[0];
    if (!first) {
      skip(stats, "no role gets a working HTML page", template);
      continue;
    }
    absent ??= new Map();
    if (!absent.has(first.role))
      absent.set(
        first.role,
        await servedPage(scope.run, userOf(scope, first.role), new URL(absentPath(), origin).href),
      );
    const unknown = absent.get(first.role);
    const catchAll =
      unknown?.exchange.response?.status === 200 &&
      comparableBody(unknown.exchange.response.body, new URL(unknown.exchange.request.url).pathname) ===
        comparableBody(first.answer.exchange.response?.body ?? "", path);
    if (catchAll && !(await rendersDifferently(scope, first.role, path))) {
      skip(stats, "indistinguishable from an unknown path (catch-all shell)", template);
      continue;
    }
    mentionTexts ??= await textsToSearch(scope);
    const mentioned = mentionIn(template, mentionTexts);
    if (mentioned) {
      skip(stats, "mentioned in a reachable page or the scripts it loads", template);
      continue;
    }
    if (redirectInSource(scope.run.context, template, first.answer.exchange.response?.body)) {
      skip(stats, "the source redirects or navigates there (reached after an action)", template);
      continue;
    }
    stats.flagged.push(template);
    candidates.push(await draftFor(scope, template, path, provenance, served, mentionTexts));
  }
  return { candidates, stats };
}

/** For a catch-all shell: whether the browser renders the path as something other than an unknown path. */
async function rendersDifferently(scope: GuideScope, role: string, path: string): Promise<boolean> {
  if (!scope.graph.rendered) return false;
  const crawlRole = scope.roles.find((each) => each.role === role);
  if (!crawlRole) return false;
  try {
    const session = browserSessionFor(scope.run.context);
    const browsing = await session.context(crawlRole, scope.graph.origin);
    const real = await renderPage(session, browsing, scope.graph.origin, path);
    const unknown = await renderPage(session, browsing, scope.graph.origin, absentPath());
    const text = visibleText(real.page.text);
    return text.length > 0 && text !== visibleText(unknown.page.text) && !/not found|404/i.test(text);
  } catch {
    return false;
  }
}

/** Every reachable page's HTML and every script those pages load, across roles, keyed by where it is. */
async function textsToSearch(scope: GuideScope): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const walk of scope.graph.roles) {
    for (const page of walk.pages) if (page.text) texts.set(`page ${page.path} (${walk.role})`, page.text);
    const role = scope.roles.find((each) => each.role === walk.role);
    if (!role) continue;
    for (const [script, text] of await scriptTexts(scope.graph, walk, role, scope.fetcher))
      if (![...texts.keys()].includes(`script ${script}`)) texts.set(`script ${script}`, text);
  }
  return texts;
}

async function draftFor(
  scope: GuideScope,
  template: string,
  path: string,
  provenance: string[],
  served: Array<{ role: string; answer: ServedAnswer }>,
  texts: Map<string, string>,
): Promise<EnvelopeDraft> {
  const first = served[0] as { role: string; answer: ServedAnswer };
  let screenshot: Uint8Array | undefined;
  const role = scope.roles.find((each) => each.role === first.role);
  if (scope.graph.rendered && role) {
    const session = browserSessionFor(scope.run.context);
    const browsing = await session.context(role, scope.graph.origin).catch(() => undefined);
    if (browsing)
      screenshot = (
        await renderPage(session, browsing, scope.graph.origin, path, { screenshot: true }).catch(
          () => undefined,
        )
      )?.screenshot;
  }
  const roles = served.map((each) => each.role);
  const searched = scope.graph.roles.map((walk) => ({
    role: walk.role,
    stopped: walk.stopped ?? null,
    pages: walk.pages.map((page) => ({ path: page.path, status: page.status ?? null, links: page.links })),
  }));
  const fromSource = provenance.some((each) => each === "source" || each === "openapi");
  const pageCount = scope.graph.roles.reduce((sum, walk) => sum + walk.pages.length, 0);
  return guideFinding(scope.run, {
    defectClass: "undiscoverable-feature",
    template,
    title: `Page ${template} works when typed but nothing in the UI leads to it`,
    summary: `${path} answers a working HTML page (200) to ${roles.join(", ")}, yet none of the ${pageCount} page(s) reachable from the UI entry ${scope.graph.entry} links to it${scope.graph.rendered ? " (links read from the rendered DOM, script-built menus included)" : " (links read from the served HTML; no browser was available)"}, no form posts near it, and its path is mentioned neither in those pages nor in the ${[...texts.keys()].filter((key) => key.startsWith("script ")).length} script(s) they load. The map learned the route from: ${provenance.join(", ")}.`,
    impact:
      "People who may use this page cannot find it: the feature exists but only someone who knows its address reaches it.",
    severity: "medium",
    confidence: fromSource && scope.graph.rendered ? 0.75 : 0.65,
    exchanges: [{ label: "typed-into-the-address-bar", exchange: first.answer.exchange }],
    facts: {
      template,
      concrete_path: path,
      served_to: roles,
      learned_from: provenance,
      ui_entry: scope.graph.entry,
      rendered: scope.graph.rendered,
      searched_pages: searched,
      searched_texts: [...texts.keys()],
    },
    ...(screenshot ? { screenshot } : {}),
    steps: [
      `Open ${scope.graph.entry} as ${first.role} and follow every link, menu and button: none leads to ${template}.`,
      `Type ${path} into the address bar as ${first.role}: the page answers 200 and works.`,
    ],
  });
}
