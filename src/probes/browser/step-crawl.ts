import { mayFollow } from "../pages/urls.ts";
import type { AgentTab } from "./agent-tab.ts";

// A rendered crawl in the agent's tab: the links a person sees once scripts have run, breadth first from
// one page, same origin only, never a sign-out or delete link. One page per path: `/tasks/3` and
// `/tasks/4` are both opened (an agent looking for a feature needs the concrete pages).

export async function crawlRendered(tab: AgentTab, from: string, maxPages: number) {
  const origin = new URL(from).origin;
  const queue = [from];
  const seen = new Set([normalised(from)]);
  const pages: Array<{
    path: string;
    status: number | null;
    title: string;
    links: number;
    forms: number;
    error?: string;
  }> = [];
  while (queue.length > 0 && pages.length < maxPages) {
    const url = queue.shift()!;
    const path = new URL(url).pathname + new URL(url).search;
    try {
      const response = await tab.page.goto(url, { waitUntil: "load", timeout: 15_000 });
      await tab.page.waitForLoadState("networkidle", { timeout: 2000 }).catch(() => {});
      const found = await tab.page.evaluate(() => ({
        links: [...document.querySelectorAll("a[href]")].map((anchor) => (anchor as HTMLAnchorElement).href),
        forms: document.querySelectorAll("form").length,
      }));
      pages.push({
        path,
        status: response?.status() ?? null,
        title: await tab.page.title().catch(() => ""),
        links: found.links.length,
        forms: found.forms,
      });
      for (const href of found.links) {
        let next: URL;
        try {
          next = new URL(href);
        } catch {
          continue;
        }
        if (next.origin !== origin || !mayFollow(next.pathname + next.search)) continue;
        const key = normalised(next.href);
        if (seen.has(key)) continue;
        seen.add(key);
        queue.push(next.href.split("#")[0]!);
      }
    } catch (error) {
      pages.push({ path, status: null, title: "", links: 0, forms: 0, error: String(error).split("\n")[0] });
    }
  }
  return { from, as: tab.role, pages, left_unvisited: queue.length };
}

function normalised(url: string): string {
  return url.split("#")[0]!.replace(/\/+$/, "");
}
