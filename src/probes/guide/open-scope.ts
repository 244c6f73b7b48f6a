import type { ToolContext } from "../../tools/context.ts";
import type { RequestBudget } from "../http/http-client.ts";
import type { CrawlRole } from "../pages/crawl-pages.ts";
import { webFetcher, webRoles } from "../pages/web-session.ts";
import { openProbeRun } from "../session/probe-run.ts";
import type { GuideScope } from "./guide-scope.ts";
import { getPageTemplates } from "./path-templates.ts";
import { type UiGraph, walkUi } from "./ui-graph.ts";

// Opening a GUIDE check: the probe run, the roles to walk as, a budgeted fetcher, and the walk of the UI
// from its entry that every check judges against.

export interface GuideLimits {
  /** Roles (or profile user names) to walk as; `anonymous` is one. Default: every role. */
  roles?: string[];
  /** Pages the browser opens per role (default 80). */
  max_pages?: number;
  /** The whole call (default 240 s). */
  max_seconds?: number;
  /** HTTP requests for this call (default 400). */
  max_requests?: number;
}

export async function openGuideScope(
  context: ToolContext,
  tool: string,
  input: GuideLimits,
): Promise<{ scope: GuideScope; budget: RequestBudget; stats: Record<string, unknown> } | string> {
  const maxRequests = input.max_requests ?? 400;
  const run = openProbeRun(context, tool, { max_requests: maxRequests });
  if (typeof run === "string") return run;
  const deadline = Date.now() + (input.max_seconds ?? 240) * 1000;
  const { roles, users } = webRoles(context, run.target, input.roles);
  if (roles.length === 0)
    return `none of the roles asked for (${(input.roles ?? []).join(", ")}) is in the profile`;
  const { fetcher, budget } = webFetcher(context, run.target, maxRequests);
  const graph = await sharedWalk(context, roles, input.max_pages ?? 80, () =>
    walkUi(context, run.target, roles, fetcher, {
      maxPagesPerRole: input.max_pages ?? 80,
      deadline,
      templates: getPageTemplates(run.map),
    }),
  );
  const stats: Record<string, unknown> = {
    entry: graph.entry,
    rendered: graph.rendered,
    ...(graph.browserError ? { browser_error: graph.browserError } : {}),
    roles: graph.roles.map((walk) => ({
      role: walk.role,
      pages: walk.pages.length,
      html_pages: walk.pages.filter((page) => page.html).length,
      ...(walk.stopped ? { stopped: walk.stopped } : {}),
      ...(walk.error ? { error: walk.error } : {}),
    })),
  };
  return { scope: { run, roles, users, graph, fetcher, deadline }, budget, stats };
}

/**
 * One walk per run for the same roles and page cap: every GUIDE check judges the same UI, and walking it
 * again per check doubled GUIDE's time for nothing.
 */
function sharedWalk(
  context: ToolContext,
  roles: readonly CrawlRole[],
  maxPages: number,
  walk: () => Promise<UiGraph>,
): Promise<UiGraph> {
  const key = `guide:walk:${roles.map((role) => role.role).join(",")}:${maxPages}`;
  let graph = context.shared.get(key) as Promise<UiGraph> | undefined;
  if (!graph) {
    graph = walk();
    context.shared.set(key, graph);
    // A walk that failed is not kept: the next check walks again.
    graph.catch(() => context.shared.delete(key));
  }
  return graph;
}

/** The request counts and sign-in failures of a finished check, for its stats. */
export function closingStats(scope: GuideScope, budget: RequestBudget): Record<string, unknown> {
  return {
    requests: { pages: budget.used, probe: scope.run.client.stats.sent },
    ...(Object.keys(scope.run.signInErrors).length > 0 ? { sign_in_errors: scope.run.signInErrors } : {}),
  };
}
