import type { ToolContext } from "../../tools/context.ts";
import { RequestBudget } from "../http/http-client.ts";
import { forbiddenRequests } from "../http/profile-endpoints.ts";
import type { ProbeTarget } from "../http/run-http.ts";
import { agentBudget, openHttpClient, runLimiter } from "../http/run-http.ts";
import { byPrivilege } from "../session/roles.ts";
import { sessionPoolFor } from "../session/session-pool.ts";
import { ANONYMOUS, type CrawlRole } from "./crawl-pages.ts";
import { limitedFetcher, type PageFetcher } from "./page-fetcher.ts";

// What the web readers need from a run: one identity per profile role (signed in through the run's
// session layer, so every reader and probe shares one session per user) and a fetcher held to the run's
// budget, concurrency cap and excluded operations.

export interface WebRoles {
  roles: CrawlRole[];
  /** Role → the profile user crawling as it. */
  users: Record<string, string>;
}

/**
 * Anonymous, then one user per profile role, least privileged first. `wanted` keeps only the roles (or
 * user names) listed; `anonymous` is one of them.
 */
export function webRoles(context: ToolContext, target: ProbeTarget, wanted?: readonly string[]): WebRoles {
  const sessions = sessionPoolFor(context, target.baseUrl);
  const client = openHttpClient(context, target, { maxRequests: 50 });
  const keep = (role: string, user?: string): boolean =>
    !wanted || wanted.includes(role) || (user !== undefined && wanted.includes(user));
  const roles: CrawlRole[] = keep(ANONYMOUS.role) ? [ANONYMOUS] : [];
  const users: Record<string, string> = {};
  for (const user of byPrivilege(sessions.users())) {
    if (users[user.role] !== undefined || user.role === ANONYMOUS.role || !keep(user.role, user.name))
      continue;
    users[user.role] = user.name;
    roles.push({
      role: user.role,
      headers: async () =>
        (await sessions.prepare(client, user.name, { method: "GET", url: target.baseUrl })).headers ?? {},
      restarts: () => client.targetRestarts,
    });
  }
  return { roles, users };
}

/** GETs charged to the agent's budget (at most `maxRequests` for this call), under the run's concurrency cap. */
export function webFetcher(
  context: ToolContext,
  target: ProbeTarget,
  maxRequests: number,
): { fetcher: PageFetcher; budget: RequestBudget } {
  const budget = new RequestBudget(maxRequests, agentBudget(context));
  const limiter = runLimiter(context);
  const refuse = forbiddenRequests(target.profile);
  const fetcher = limitedFetcher({
    take: () => budget.take(),
    acquire: () => limiter.acquire(),
    refuse: (url) => refuse?.("GET", url),
  });
  return { fetcher, budget };
}
