import type { HttpExchange } from "../http/http-types.ts";
import { matchesTemplate } from "../http/target-url.ts";
import { isHtml } from "../session/html-forms.ts";
import type { ResourceFamily } from "./operation-index.ts";

// A server-rendered list is a page of links to its items (`<a href="/notes/7/">`), not an array: the ids a
// user can see there are the ones its links put where the item path takes its id.

const HREF = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;

/** Ids of `family`'s items the page links to, under the same parents; [] for an answer that is not HTML. */
export function linkedIds(
  exchange: HttpExchange,
  family: ResourceFamily,
  pathValues: Record<string, string>,
): string[] {
  const response = exchange.response;
  const idParameter = family.idParameter;
  if (!response || !family.item || !idParameter || !isHtml(response.contentType, response.body)) return [];
  const page = new URL(exchange.request.url);
  const ids: string[] = [];
  for (const match of response.body.matchAll(HREF)) {
    let target: URL;
    try {
      target = new URL(match[1] ?? match[2] ?? match[3] ?? "", page);
    } catch {
      continue;
    }
    if (target.origin !== page.origin) continue;
    const values = matchesTemplate(family.item, target.pathname);
    const id = values?.[idParameter];
    if (!values || !id || ids.includes(id)) continue;
    if (Object.entries(pathValues).every(([name, value]) => values[name] === value)) ids.push(id);
  }
  return ids;
}
