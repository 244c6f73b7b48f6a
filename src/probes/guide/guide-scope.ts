import type { CrawlRole } from "../pages/crawl-pages.ts";
import type { PageFetcher } from "../pages/page-fetcher.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import type { UiGraph } from "./ui-graph.ts";

// What every GUIDE check works with once the UI has been walked: the probe run (client, sessions, masker),
// the roles and the profile user behind each, the walk itself, a budgeted page fetcher and the deadline.

export interface GuideScope {
  run: ProbeRun;
  roles: CrawlRole[];
  /** Role → profile user (absent for anonymous). */
  users: Record<string, string>;
  graph: UiGraph;
  fetcher: PageFetcher;
  deadline: number;
}

/** The profile user a role is sent as (undefined: anonymous). */
export function userOf(scope: GuideScope, role: string): string | undefined {
  return scope.users[role];
}

/** Every path any role reached or saw linked: where concrete ids for templates come from. */
export function seenPaths(scope: GuideScope): string[] {
  const paths = new Set<string>();
  for (const walk of scope.graph.roles) {
    for (const path of walk.reached) paths.add(path);
    for (const page of walk.pages) for (const link of page.links) paths.add(link);
  }
  return [...paths];
}
