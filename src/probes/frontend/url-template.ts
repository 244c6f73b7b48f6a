import type { Part } from "./evaluate.ts";

// A request URL known only in parts (literals and holes) as an operation: its path template, relative to
// the server root, and the query parameters it names. A leading hole is the API's base (`${api}/users`,
// `this.host + "/users"`) and is dropped; trailing holes glued to a segment are a query string built
// elsewhere. Another site's URL is not the target's operation and answers undefined.

export interface UrlTemplate {
  path: string;
  query: Array<{ name: string; example?: string }>;
}

/** Files a page loads, not operations it calls. */
const STATIC_FILE =
  /\.(?:png|jpe?g|gif|svg|ico|webp|avif|bmp|css|m?js|map|woff2?|ttf|otf|eot|mp[34]|webm|ogg|wav|wasm|pdf|zip)$/i;
const LOCAL_HOST = /^(?:localhost|127(?:\.\d+){3}|0\.0\.0\.0|\[::1\])$/i;
/** Hole names that say nothing: minified identifiers and generic words, named `id` instead. */
const MEANINGLESS = /^(?:.{1,2}|value|param|data|arg\d*|undefined|this)$/i;

/**
 * `bare` accepts a relative URL with no slash (`fetch("upload")`): right for calls that only take URLs,
 * wrong for `get`/`delete` names other objects share (`cache.get("user")`).
 */
export function urlTemplate(parts: readonly Part[], pageUrl: URL, bare = false): UrlTemplate | undefined {
  const remaining = [...parts];
  let droppedBase = false;
  while (remaining[0] && "hole" in remaining[0]) {
    remaining.shift();
    droppedBase = true;
  }
  if (remaining.length === 0) return undefined;
  const holes: string[] = [];
  let rendered = "";
  for (const part of remaining) {
    if ("literal" in part) rendered += part.literal;
    else {
      rendered += `qaashole${holes.length}x`;
      holes.push(part.hole);
    }
  }
  rendered = rendered.trim();
  const absolute = /^(?:https?:)?\/\//i.test(rendered);
  // After a dropped base the rest is a path (`/users`, `api/users`); a bare word is a key (`cache.get("user")`).
  if (
    !absolute &&
    !/^(?:\.{0,2}\/|[\w.-]+\/)/.test(rendered) &&
    !(bare && !droppedBase && /^[\w.-]+(?:[?#]|$)/.test(rendered))
  )
    return undefined;
  if (droppedBase && !absolute && !/^\.{0,2}\//.test(rendered)) rendered = `/${rendered}`;
  let url: URL;
  try {
    url = new URL(rendered, pageUrl);
  } catch {
    return undefined;
  }
  if (!/^https?:$/.test(url.protocol)) return undefined;
  // A configured API origin of a local build (`http://localhost:3000`) is the target seen from another
  // port; any other site is not the target.
  // A host built from a variable is the configured API host: the path is what counts.
  if (url.host !== pageUrl.host && !LOCAL_HOST.test(url.hostname) && !url.hostname.includes("qaashole"))
    return undefined;
  // What a route can hold: letters, digits, `-._~%:@+=!$,;` and the holes; anything else is not a URL.
  if (
    !/^[\w\-.~%:@+=!$,;/]*$/.test(url.pathname) ||
    !/[A-Za-z]/.test(url.pathname.replace(/qaashole\d+x/g, ""))
  )
    return undefined;

  const names = new Map<string, number>();
  const nameFor = (index: number): string => {
    const raw = (holes[index] ?? "").replace(/[^A-Za-z0-9_]/g, "");
    const base = MEANINGLESS.test(raw) ? "id" : raw;
    const seen = (names.get(base) ?? 0) + 1;
    names.set(base, seen);
    return seen === 1 ? base : `${base}${seen}`;
  };
  const segments = url.pathname.split("/").map((segment) => decodeSafely(segment));
  const last = segments.length - 1;
  const path = segments
    .map((segment, index) => {
      const express = segment.match(/^:([A-Za-z_][A-Za-z0-9_]*)$/);
      if (express) return `{${express[1]}}`;
      // A hole glued to the end of the last segment's text is a query string or suffix built elsewhere.
      const trimmed = index === last ? segment.replace(/^(.+?)(?:qaashole\d+x)+$/, "$1") : segment;
      return trimmed.replace(/qaashole(\d+)x/g, (_whole, hole: string) => `{${nameFor(Number(hole))}}`);
    })
    .join("/");
  if (STATIC_FILE.test(path) || path.length > 300) return undefined;

  const query: UrlTemplate["query"] = [];
  for (const pair of url.search.replace(/^\?/, "").split("&")) {
    const [rawName = "", ...rest] = pair.split("=");
    const name = decodeSafely(rawName);
    if (!name || /qaashole/.test(name) || query.some((entry) => entry.name === name)) continue;
    const value = decodeSafely(rest.join("="));
    query.push(value && !/qaashole/.test(value) ? { name, example: value } : { name });
  }
  return { path: path || "/", query };
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
