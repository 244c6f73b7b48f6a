import { mayFollow } from "../pages/urls.ts";
import { pathOnly, templateOf } from "./path-templates.ts";

// Which links a UI walk opens. Every link counts as seen (the page holding it was read), but opening them
// all costs seconds each: a walk opens a couple of pages per path template (a second record's page confirms
// a dead end; more records rarely lead anywhere new) and a few query variants of one path, because a query
// often selects content (`/help?topic=…`, `/settings?tab=…`) that a person reads as a page of its own.

/** Distinct paths of one template opened. */
export const PAGES_PER_TEMPLATE = 2;
/** Distinct queries of one path opened, besides the bare path. */
export const QUERIES_PER_PATH = 6;

export class WalkFrontier {
  readonly #templates: readonly string[];
  readonly #admitted = new Set<string>();
  readonly #pathsOfTemplate = new Map<string, Set<string>>();
  readonly #queriesOfPath = new Map<string, number>();

  constructor(templates: readonly string[]) {
    this.#templates = templates;
  }

  /** Whether to open `link` (a same-origin `/path?query`); false for one already admitted or over a cap. */
  admit(link: string): boolean {
    if (!link.startsWith("/") || !mayFollow(link)) return false;
    const path = pathOnly(link);
    const key = `${path}${canonicalQuery(link)}`;
    if (this.#admitted.has(key)) return false;
    const template = templateOf(path, this.#templates);
    const paths = this.#pathsOfTemplate.get(template) ?? new Set<string>();
    if (!paths.has(path) && paths.size >= PAGES_PER_TEMPLATE) return false;
    if (key !== path) {
      const queries = this.#queriesOfPath.get(path) ?? 0;
      if (queries >= QUERIES_PER_PATH) return false;
      this.#queriesOfPath.set(path, queries + 1);
    }
    paths.add(path);
    this.#pathsOfTemplate.set(template, paths);
    this.#admitted.add(key);
    return true;
  }
}

/** `?a=1&b=2` with parameters sorted and the fragment dropped, or "" without a query. */
function canonicalQuery(link: string): string {
  const query = link.split("#")[0]?.split("?")[1];
  if (!query) return "";
  const params = new URLSearchParams(query);
  params.sort();
  const text = params.toString();
  return text ? `?${text}` : "";
}
