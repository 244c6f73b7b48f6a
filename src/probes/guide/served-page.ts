import type { HttpExchange } from "../http/http-types.ts";
import type { ProbeRun } from "../session/probe-run.ts";
import { send } from "../session/probe-run.ts";

// Whether a path is a working page when typed into the address bar: an HTML 200 that is neither the
// application's sign-in form nor its error page, and not the same document every unknown path gets (a
// client-rendered shell or a soft 404 answers 200 to anything, which proves nothing about the path).

const ACCEPT_HTML = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5";

/** A title or heading that says the page is an error or a sign-in, whatever the status says. */
const NOT_A_WORKING_PAGE =
  /<(?:title|h1)[^>]*>[^<]*(?:not found|404|403|401|500|error|forbidden|access denied|unauthori[sz]ed|sign in|log in|login|page missing|does not exist)[^<]*</i;

export interface ServedAnswer {
  exchange: HttpExchange;
  ok: boolean;
  /** Why the answer does not show a working page, when it does not. */
  reason?: string;
}

export async function getAsUser(
  run: ProbeRun,
  user: string | undefined,
  url: string,
): Promise<HttpExchange | undefined> {
  return send(run, user, { method: "GET", url, headers: { accept: ACCEPT_HTML } });
}

/** The answer to `url` as `user`, judged as a page a person could use. */
export async function servedPage(
  run: ProbeRun,
  user: string | undefined,
  url: string,
): Promise<ServedAnswer | undefined> {
  const exchange = await getAsUser(run, user, url);
  if (!exchange) return undefined;
  const response = exchange.response;
  if (!response) return { exchange, ok: false, reason: exchange.error ?? "no answer" };
  if (response.status !== 200) return { exchange, ok: false, reason: `answered ${response.status}` };
  if (!/html/i.test(response.contentType))
    return { exchange, ok: false, reason: "not HTML (an API or a file)" };
  if (NOT_A_WORKING_PAGE.test(response.body))
    return { exchange, ok: false, reason: "an error or sign-in page" };
  if (/<input[^>]+type\s*=\s*["']?password/i.test(response.body))
    return { exchange, ok: false, reason: "a sign-in form" };
  return { exchange, ok: true };
}

/** The body with what varies between two loads of one document (the path echoed, numbers, nonces) removed. */
export function comparableBody(body: string, path: string): string {
  return body
    .split(path)
    .join("")
    .replace(/\b[0-9a-f]{16,}\b/gi, "")
    .replace(/\d+/g, "0")
    .replace(/\s+/g, " ")
    .trim();
}

/** The visible words of an HTML document (scripts, styles and tags dropped), for comparing renderings. */
export function visibleText(html: string): string {
  return html
    .replace(/<(script|style|noscript|template)[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/\d+/g, "0")
    .replace(/\s+/g, " ")
    .trim();
}

/** A path no application serves on purpose: what it answers is what any unknown path gets. */
export function absentPath(): string {
  return `/qaas-absent-${Math.random().toString(36).slice(2, 10)}`;
}
