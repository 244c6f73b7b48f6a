// How the web readers GET a page, a script or a source map: Node's fetch, on its own (tests, the CLI) or
// under the run's limits (tools): the agent's request budget, the run's concurrency cap and the profile's
// excluded operations. Not the run's HttpClient: it keeps 512 KB of a body, and bundles are larger.

import { timeoutSignal } from "../../timeout-signal.ts";

export interface PageRequest {
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface PageResponse {
  status: number;
  /** Lower-case names; Set-Cookie kept apart. */
  headers: Record<string, string>;
  setCookies: string[];
  body: string;
}

/** GETs one URL without following redirects; undefined when policy forbids the request (nothing was sent). */
export type PageFetcher = (request: PageRequest) => Promise<PageResponse | undefined>;

/** Raised by a fetcher when the run's request budget is spent: the crawl stops with what it has. */
export class CrawlBudgetSpent extends Error {
  override readonly name = "CrawlBudgetSpent";
}

const MAX_BODY_CHARS = 4 * 1024 * 1024;

export const fetchPage: PageFetcher = async (request) => {
  const response = await fetch(request.url, {
    method: "GET",
    redirect: "manual",
    headers: request.headers,
    signal: timeoutSignal(request.timeoutMs, request.signal),
  });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const readable = /html|javascript|ecmascript|json|text\/|xml/i.test(headers["content-type"] ?? "text/");
  const body = readable ? (await response.text()).slice(0, MAX_BODY_CHARS) : "";
  if (!readable) await response.body?.cancel();
  return { status: response.status, headers, setCookies: response.headers.getSetCookie(), body };
};

export interface FetchLimits {
  /** Takes one request from a budget; false when it is spent. */
  take(): boolean;
  /** Waits for a concurrency slot and answers its release. */
  acquire(): Promise<() => void>;
  /** Why a URL may never be requested (an operation the profile excludes), or undefined. */
  refuse?(url: string): string | undefined;
}

/** A fetcher that asks the limits first: refused URLs answer undefined, a spent budget stops the reader. */
export function limitedFetcher(limits: FetchLimits, inner: PageFetcher = fetchPage): PageFetcher {
  return async (request) => {
    if (limits.refuse?.(request.url)) return undefined;
    if (!limits.take()) throw new CrawlBudgetSpent("the request budget is spent");
    const release = await limits.acquire();
    try {
      return await inner(request);
    } finally {
      release();
    }
  };
}
