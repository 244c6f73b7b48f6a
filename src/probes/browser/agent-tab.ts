import type { BrowserContext, Page } from "playwright-core";
import type { ToolContext } from "../../tools/context.ts";
import { onAgentEnd } from "../../tools/run-end.ts";
import type { ProbeTarget } from "../http/run-http.ts";
import { probeTargetOf } from "../http/run-http.ts";
import { ANONYMOUS } from "../pages/crawl-pages.ts";
import { webRoles } from "../pages/web-session.ts";
import type { PageLog, Viewport } from "./browser-session.ts";
import { browserSessionFor, DESKTOP, MOBILE } from "./browser-session.ts";

// The tab an agent drives with the step tools (navigate, locate, act, expect, screenshot, axe, trace):
// one per agent, in the context of the role it browses as. Navigating as another role or at another
// width moves the agent to that context's tab; the previous tab is closed, so an agent never leaves
// pages open behind it. Writes the target does not allow are blocked in the browser as well.

export interface AgentTab {
  role: string;
  viewport: Viewport;
  context: BrowserContext;
  page: Page;
  log: PageLog;
  target: ProbeTarget;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function tabsOf(context: ToolContext): Map<string, AgentTab> {
  const key = "browser:agent-tabs";
  let tabs = context.shared.get(key) as Map<string, AgentTab> | undefined;
  if (!tabs) {
    tabs = new Map();
    context.shared.set(key, tabs);
  }
  return tabs;
}

/** One tab per agent, or per agent session when the caller runs several at once (bug-bash charters). */
function tabKey(context: ToolContext): string {
  return context.session ? `${context.agent.name}#${context.session}` : context.agent.name;
}

/** The agent's current tab, or a sentence saying it has none yet. */
export function currentTab(context: ToolContext): AgentTab | string {
  return tabsOf(context).get(tabKey(context)) ?? "no page is open: call navigate first";
}

/** The agent's tab as `role` at `width`: the current one when it matches, else a new one (the old closed). */
export async function tabFor(
  context: ToolContext,
  role: string | undefined,
  width: "desktop" | "mobile" | undefined,
): Promise<AgentTab | string> {
  const target = probeTargetOf(context);
  if (typeof target === "string") return target;
  const tabs = tabsOf(context);
  const current = tabs.get(tabKey(context));
  const wantedRole = role ?? current?.role ?? ANONYMOUS.role;
  const viewport =
    width === "mobile" ? MOBILE : width === "desktop" ? DESKTOP : (current?.viewport ?? DESKTOP);
  if (
    current &&
    current.role === wantedRole &&
    current.viewport.name === viewport.name &&
    !current.page.isClosed()
  )
    return current;
  const identity = webRoles(context, target).roles.find((candidate) => candidate.role === wantedRole);
  if (!identity) {
    const known = webRoles(context, target).roles.map((candidate) => candidate.role);
    return `no role "${wantedRole}" in the profile (known: ${known.join(", ")})`;
  }
  const session = browserSessionFor(context);
  const origin = new URL(target.baseUrl).origin;
  const browserContext = await session.context(identity, origin, viewport, context.session);
  if (!target.writesAllowed) await blockWrites(browserContext);
  const { page, log } = await session.newPage(browserContext);
  if (current && !current.page.isClosed()) await current.page.close().catch(() => {});
  const tab: AgentTab = { role: wantedRole, viewport, context: browserContext, page, log, target };
  tabs.set(tabKey(context), tab);
  // The agent's first tab: it is closed when the agent ends, not left open for the rest of the run.
  if (!current) onAgentEnd(context, () => closeTab(context));
  return tab;
}

const blocking = new WeakSet<BrowserContext>();

/** A target that allows no writes gets none from the browser either: non-GET requests are aborted. */
async function blockWrites(context: BrowserContext): Promise<void> {
  if (blocking.has(context)) return;
  blocking.add(context);
  await context.route("**/*", (route) =>
    SAFE_METHODS.has(route.request().method()) ? route.fallback() : route.abort("blockedbyclient"),
  );
}

/** Closes the agent's tab (its context stays for the run). */
export async function closeTab(context: ToolContext): Promise<void> {
  const tabs = tabsOf(context);
  const tab = tabs.get(tabKey(context));
  tabs.delete(tabKey(context));
  if (tab && !tab.page.isClosed()) await tab.page.close().catch(() => {});
}

/** Paths of records the run created in the browser (a form's POST that led to a new record's page). */
export function createdPaths(context: ToolContext): Set<string> {
  const key = "browser:created-paths";
  let paths = context.shared.get(key) as Set<string> | undefined;
  if (!paths) {
    paths = new Set();
    context.shared.set(key, paths);
  }
  return paths;
}

/** Whether `url` shows a record the run created (its page, or a page under it). */
export function showsCreatedRecord(context: ToolContext, url: string): boolean {
  let path: string;
  try {
    path = new URL(url).pathname.replace(/\/+$/, "");
  } catch {
    return false;
  }
  for (const created of createdPaths(context))
    if (path === created || path.startsWith(`${created}/`)) return true;
  return false;
}
