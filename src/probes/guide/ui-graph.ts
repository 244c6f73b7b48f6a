import type { ToolContext } from "../../tools/context.ts";
import { browserSessionFor } from "../browser/browser-session.ts";
import { mapConcurrent } from "../http/concurrency.ts";
import type { ProbeTarget } from "../http/run-http.ts";
import { ANONYMOUS, type CrawlRole, crawlAsRoles } from "../pages/crawl-pages.ts";
import type { PageFetcher } from "../pages/page-fetcher.ts";
import { joinEntry } from "../pages/urls.ts";
import type { SignInMemory } from "../session/credential.ts";
import { sessionPoolFor } from "../session/session-pool.ts";
import { isSignInPath } from "../session/signed-out.ts";
import { pathOnly } from "./path-templates.ts";
import { type RenderedPage, renderPage } from "./rendered-page.ts";
import { WalkFrontier } from "./walk-frontier.ts";

const TABS_PER_WALK = 2;
/**
 * Roles walked at once. A walk mostly waits (a page's scripts settling), and roles' walks share nothing but
 * the browser: two at once roughly halve GUIDE's time without piling every role's tabs onto two cores.
 */
const ROLES_AT_ONCE = 2;
const RETRY_PAUSE_MS = 2_000;

// What each role can reach from the UI entry by clicking: a breadth-first walk in a real browser (so links
// a script renders into a menu count), one per role. It never submits a form and never follows a sign-out
// or delete link. Without a browser it falls back to the HTML crawl, and says so: the dead-end check then
// does not run, since only the rendered page tells whether a script offers a way on.

export interface RoleGraph {
  role: string;
  /** Every page the walk opened, in the order it opened them. */
  pages: RenderedPage[];
  /** Paths (no query) the role reached: pages opened and where their redirects ended. */
  reached: Set<string>;
  /** Why the walk ended early; `signed_out`: the role's session ended under it and signing in again did not help. */
  stopped?: "max_pages" | "time" | "aborted" | "sign_in" | "signed_out";
  /** Why the role could not walk (its sign-in failed), when it could not. */
  error?: string;
}

export interface UiGraph {
  entry: string;
  origin: string;
  rendered: boolean;
  roles: RoleGraph[];
  /** Why the browser could not be used, when it could not. */
  browserError?: string;
}

export interface GraphLimits {
  maxPagesPerRole: number;
  deadline: number;
  /** The map's page templates: the walk opens a few pages of each, not every record's page. */
  templates?: readonly string[];
}

export async function walkUi(
  context: ToolContext,
  target: ProbeTarget,
  roles: readonly CrawlRole[],
  fetcher: PageFetcher,
  limits: GraphLimits,
): Promise<UiGraph> {
  const entry = target.profile?.ui?.entry ?? "/";
  const start = new URL(joinEntry(target.baseUrl, entry));
  const graph: UiGraph = {
    entry: `${start.pathname}${start.search}`,
    origin: start.origin,
    rendered: true,
    roles: [],
  };
  try {
    await browserSessionFor(context).browser();
  } catch (error) {
    graph.browserError = (error instanceof Error ? error.message : String(error)).split("\n")[0];
    return crawlFallback(target, entry, roles, fetcher, limits, graph);
  }
  // In the roles' order, whichever walk finishes first: the checks read them as a list.
  graph.roles = await mapConcurrent(roles, ROLES_AT_ONCE, async (role): Promise<RoleGraph> => {
    try {
      return await walkRole(context, role, graph, limits, sessionPoolFor(context, target.baseUrl).memory);
    } catch (error) {
      // A role that cannot sign in walked nothing: its walk counts as cut short, never as "links nothing".
      return {
        role: role.role,
        pages: [],
        reached: new Set(),
        stopped: "sign_in",
        error: (error instanceof Error ? error.message : String(error)).split("\n")[0],
      };
    }
  });
  return graph;
}

async function walkRole(
  context: ToolContext,
  role: CrawlRole,
  graph: UiGraph,
  limits: GraphLimits,
  signIn: SignInMemory,
): Promise<RoleGraph> {
  const session = browserSessionFor(context);
  const browsing = await session.context(role, graph.origin);
  const signedIn = role.role !== ANONYMOUS.role;
  const render = async (path: string): Promise<RenderedPage> =>
    (
      await renderPage(session, browsing, graph.origin, path, {
        timeoutMs: Math.max(1_000, Math.min(15_000, limits.deadline - Date.now())),
      })
    ).page;
  const walk: RoleGraph = { role: role.role, pages: [], reached: new Set() };
  const frontier = new WalkFrontier(limits.templates ?? []);
  const queue = [graph.entry];
  frontier.admit(graph.entry);
  const openNext = async (): Promise<void> => {
    while (queue.length > 0) {
      if (context.signal.aborted) walk.stopped = "aborted";
      else if (Date.now() >= limits.deadline) walk.stopped = "time";
      else if (walk.pages.filter((page) => page.html).length >= limits.maxPagesPerRole)
        walk.stopped = "max_pages";
      if (walk.stopped) return;
      const path = queue.shift() as string;
      let page = await render(path);
      if (unopened(page) && Date.now() + RETRY_PAUSE_MS < limits.deadline) {
        // A target restarting (after another agent's probe took it down) answers again in a moment.
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
        page = await render(path);
      }
      if (signedIn && landedOnSignIn(page, path, signIn)) {
        // Either the role may not see this page (some frameworks send it to sign in), or its session ended
        // under the walk (a restarted target forgets sessions kept in memory). Opened again, after the
        // context signs in anew if the target was restarted; still on the sign-in page, the entry decides:
        // sent to sign in there too, the session is gone and the rest of the walk would judge a signed-out UI.
        const again = await render(path);
        if (!landedOnSignIn(again, path, signIn)) page = again;
        else if (landedOnSignIn(await render(graph.entry), graph.entry, signIn)) {
          walk.stopped = "signed_out";
          return;
        }
      }
      walk.pages.push(page);
      walk.reached.add(pathOnly(path));
      if (page.finalPath.startsWith("/")) walk.reached.add(pathOnly(page.finalPath));
      for (const link of [...page.links, page.finalPath]) if (frontier.admit(link)) queue.push(link);
    }
  };
  // A page mostly waits for its scripts to settle: two tabs at once roughly halve the walk. A tab that
  // finds the queue empty while the other is still reading a page would end early, so each loops until
  // both are idle.
  let busy = 0;
  const tab = async (): Promise<void> => {
    for (;;) {
      busy += 1;
      await openNext().finally(() => {
        busy -= 1;
      });
      if (walk.stopped || busy === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (queue.length === 0 && busy === 0) return;
    }
  };
  await Promise.all(Array.from({ length: TABS_PER_WALK }, tab));
  return walk;
}

/** A page the browser could not open, or that the server failed to answer. */
function unopened(page: RenderedPage): boolean {
  return page.error !== undefined || page.status === undefined || page.status >= 500;
}

/** A page asked for by another path that ended on the sign-in page. */
function landedOnSignIn(page: RenderedPage, path: string, signIn: SignInMemory): boolean {
  return !isSignInPath(pathOnly(path), signIn) && isSignInPath(pathOnly(page.finalPath), signIn);
}

/** The HTML crawl, read into the same shape: links and forms as served, no rendered controls. */
async function crawlFallback(
  target: ProbeTarget,
  entry: string,
  roles: readonly CrawlRole[],
  fetcher: PageFetcher,
  limits: GraphLimits,
  graph: UiGraph,
): Promise<UiGraph> {
  const crawl = await crawlAsRoles(target.baseUrl, entry, roles, {
    fetchPage: fetcher,
    maxPagesPerRole: limits.maxPagesPerRole,
    maxTotalMs: Math.max(1_000, limits.deadline - Date.now()),
  });
  graph.rendered = false;
  graph.roles = roles.map((role) => {
    const visits = crawl.visits.filter((visit) => visit.roles?.includes(role.role));
    const pages: RenderedPage[] = visits.map((visit) => ({
      path: visit.path,
      finalPath: visit.path,
      status: visit.status,
      contentType: visit.html ? "text/html" : "",
      html: visit.html === true,
      links: visit.links,
      detachedLinks: [],
      forms: visit.forms.map((form) => ({ action: form.action, method: form.method })),
      navigationLandmarks: 0,
      controls: 0,
      text: (visit.inline_scripts ?? []).join("\n"),
      scripts: visit.scripts ?? [],
    }));
    const stopped = crawl.roles.find((summary) => summary.role === role.role)?.stopped;
    return {
      role: role.role,
      pages,
      reached: new Set(visits.map((visit) => pathOnly(visit.path))),
      // Any stop leaves the walk incomplete; a spent budget counts as aborted.
      ...(stopped ? { stopped: stopped === "budget" ? ("aborted" as const) : stopped } : {}),
    };
  });
  return graph;
}

/** The text of the scripts a role's reachable pages load (each once, capped), for the mention signal. */
export async function scriptTexts(
  graph: UiGraph,
  walk: RoleGraph,
  role: CrawlRole,
  fetcher: PageFetcher,
  maxScripts = 40,
): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  const wanted = [...new Set(walk.pages.flatMap((page) => page.scripts))].slice(0, maxScripts);
  for (const script of wanted) {
    try {
      const response = await fetcher({
        url: new URL(script, graph.origin).href,
        headers: await role.headers(),
        timeoutMs: 10_000,
      });
      if (response && response.status < 300) texts.set(script, response.body);
    } catch {
      // A script that cannot be read again is searched no further; the page's own text still is.
      break;
    }
  }
  return texts;
}
