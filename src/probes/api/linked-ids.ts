import type { HttpExchange } from "../http/http-types.ts";
import { matchesTemplate } from "../http/target-url.ts";
import { isHtml } from "../session/html-forms.ts";
import type { ResourceFamily } from "./operation-index.ts";
import { lastStaticSegment, nounOf, pageNoun } from "./operation-index.ts";

// A server-rendered list is a page of links to its items, not an array: `<a href="/notes/7/">` puts the id
// where the item path takes it, `<a href="/ticket.php?id=7">` in the query of a sibling page named for the
// item. The ids a user can see there are the ones those links carry.

const HREF = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;

/** Ids of `family`'s items the page links to, under the same parents; [] for an answer that is not HTML. */
export function linkedIds(
  exchange: HttpExchange,
  family: ResourceFamily,
  pathValues: Record<string, string>,
): string[] {
  const response = exchange.response;
  if (!response || !isHtml(response.contentType, response.body)) return [];
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
    const id = family.item ? idInPath(target, family, pathValues) : idInQuery(target, family, page);
    if (id && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

function idInPath(
  target: URL,
  family: ResourceFamily,
  pathValues: Record<string, string>,
): string | undefined {
  const values = matchesTemplate(family.item!, target.pathname);
  const id = family.idParameter ? values?.[family.idParameter] : undefined;
  if (!values || !id) return undefined;
  return Object.entries(pathValues).every(([name, value]) => values[name] === value) ? id : undefined;
}

/** `?id=7` (or `?ticket_id=7`) on a page named for the family's item, other than the list itself. */
function idInQuery(target: URL, family: ResourceFamily, list: URL): string | undefined {
  const noun = nounOf(lastStaticSegment(family.collection) ?? "");
  const segment = target.pathname.split("/").filter(Boolean).pop();
  if (!noun || !segment || target.pathname === list.pathname || pageNoun(segment) !== noun) return undefined;
  for (const [name, value] of target.searchParams) {
    if (value && (/^id$/i.test(name) || nounOf(name.replace(/[-_]?id$/i, "")) === noun)) return value;
  }
  return undefined;
}
