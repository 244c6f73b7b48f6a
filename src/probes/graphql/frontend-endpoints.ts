import type { Page } from "../../map/system-map.ts";

// Where the application's own frontend sends GraphQL: an Apollo/urql/Relay client's `uri`, a fetch to
// `/api/graphql`, an operation the map already holds under a GraphQL-looking path. These are tried live
// before the usual paths.

const GRAPHQL_PATH = /(?:^|\/)(?:graphql|graphiql|gql)(?:[/.?#_-]|$)|graphql/i;
const QUOTED_URL = /["'`]((?:https?:\/\/[^"'`\s/]+)?\/[^"'`\s?#]{0,120})["'`]/g;

/** Same-origin GraphQL-looking paths quoted in a script (or any text), without query or fragment. */
export function graphqlPathsInText(text: string, baseUrl: string): string[] {
  const origin = new URL(baseUrl).origin;
  const found = new Set<string>();
  for (const match of text.matchAll(QUOTED_URL)) {
    const raw = match[1] ?? "";
    if (!GRAPHQL_PATH.test(raw)) continue;
    let url: URL;
    try {
      url = new URL(raw, baseUrl);
    } catch {
      continue;
    }
    if (url.origin !== origin || /\.(?:m?js|css|map|html?|png|svg|json|graphql|gql)$/i.test(url.pathname))
      continue;
    found.add(url.pathname.length > 1 ? url.pathname.replace(/\/+$/, "") : url.pathname);
  }
  return [...found];
}

/** GraphQL-looking paths among what the map already holds: operations, routes and crawled links. */
export function graphqlPathsInMap(paths: Iterable<string>, pages: readonly Page[] = []): string[] {
  const found = new Set<string>();
  const consider = (raw: string) => {
    const path = (raw.split(/[?#]/)[0] ?? raw).replace(/\/+$/, "") || "/";
    if (GRAPHQL_PATH.test(path) && !/\{[^}]+\}/.test(path)) found.add(path);
  };
  for (const path of paths) consider(path);
  for (const page of pages) {
    consider(page.path);
    for (const link of page.links) if (link.startsWith("/")) consider(link);
  }
  return [...found];
}
